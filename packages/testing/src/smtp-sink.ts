// A real SMTP server on loopback for tests that send mail: it keeps every mail it accepts, parsed,
// and can be made to refuse mail for a while (an outage of the operator's mail server).
import type { AddressInfo } from 'node:net';
import { type AddressObject, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { waitFor } from './processes';

export interface ReceivedMail {
  /** The From header as written (`"Name" <address>` or the bare address). */
  from: string;
  /** Every address of the To header. */
  to: string[];
  subject: string;
  /** The plain text body. */
  text: string;
  /** The user the client signed in as (SMTP AUTH), if it did. */
  user?: string;
}

export interface SmtpSinkOptions {
  /** Require SMTP AUTH with these credentials (over plain TCP: a test server has no certificate). */
  auth?: { user: string; pass: string };
  /** Recipients refused for good (550 at RCPT TO). */
  rejectRecipients?: string[];
}

export interface SmtpSink {
  host: string;
  port: number;
  /** Every mail accepted so far, in order. */
  readonly mails: readonly ReceivedMail[];
  /** Connections answered 421 while down. */
  readonly refusedConnections: number;
  /** The first mail (already received or still to come) that `predicate` accepts. */
  waitForMail(predicate?: (mail: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  /** While down, every connection is answered `421` (service not available) and closed. */
  setDown(down: boolean): void;
  stop(): Promise<void>;
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  return [field ?? []].flat().flatMap((entry) => entry.value.map((address) => address.address ?? ''));
}

function smtpError(message: string, responseCode: number): Error {
  return Object.assign(new Error(message), { responseCode });
}

/** Starts the sink on 127.0.0.1 at a free port; no STARTTLS (nothing to trust), so clients speak plain SMTP. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  let down = false;
  let refusedConnections = 0;
  const rejected = new Set((options.rejectRecipients ?? []).map((address) => address.toLowerCase()));
  const server = new SMTPServer({
    logger: false,
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    onConnect(_session, callback) {
      if (!down) return callback();
      refusedConnections++;
      callback(smtpError('Service not available, try again later', 421));
    },
    onAuth(auth, _session, callback) {
      const expected = options.auth;
      if (expected && auth.username === expected.user && auth.password === expected.pass) return callback(null, { user: auth.username });
      callback(smtpError('Authentication failed', 535));
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) return callback(smtpError('No such mailbox', 550));
      callback();
    },
    onData(stream, session: SMTPServerSession, callback) {
      simpleParser(stream)
        .then((parsed) => {
          mails.push({
            from: parsed.from?.text ?? '',
            to: addresses(parsed.to),
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            user: typeof session.user === 'string' ? session.user : undefined,
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    mails,
    get refusedConnections() {
      return refusedConnections;
    },
    waitForMail: (predicate = () => true, timeoutMs = 15_000) =>
      waitFor(() => mails.find(predicate), 'a mail to arrive at the SMTP sink', timeoutMs),
    setDown(value) {
      down = value;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
