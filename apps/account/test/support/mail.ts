// Mail for the account tests: a real SMTP server (the sink) and the worker as its own process,
// which takes what the account service queues and sends it there.
import { createMailQueue, createProducerConnection, type MailJob, type Queue, type Redis } from '@modelgate/queue';
import { redisPrefix, setOption, testRedisUrl } from '@modelgate/testing';
import { retryOnPortClash, type ServiceProcess, startWorkerProcess } from '@modelgate/testing/processes';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from '@modelgate/testing/smtp-sink';
import type { TestAccount } from './app';

/** The public address links must start with (option ServerAddress). */
export const SERVER_ADDRESS = 'https://gateway.example.com';

export interface MailDelivery {
  sink: SmtpSink;
  worker: ServiceProcess;
  /** The next mail to `to` not seen before by this helper. */
  nextMailTo(to: string): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

/** The sink and the worker (logging at info, so its lines about each mail can be checked). */
export async function startMailDelivery(): Promise<MailDelivery> {
  const sink = await startSmtpSink();
  const worker = await retryOnPortClash(() => startWorkerProcess(testRedisUrl(), { LOG_LEVEL: 'info' }));
  const seen = new Set<ReceivedMail>();
  return {
    sink,
    worker,
    async nextMailTo(to) {
      const mail = await sink.waitForMail((candidate) => !seen.has(candidate) && candidate.to.includes(to));
      seen.add(mail);
      return mail;
    },
    async stop() {
      worker.kill('SIGTERM');
      await worker.exit;
      await sink.stop();
    },
  };
}

/** Points the Mail options at the sink and sets ServerAddress (after `account.reset()` emptied the options). */
export async function configureMail(account: TestAccount, sink: SmtpSink): Promise<void> {
  await setOption(account.prisma, 'SMTPServer', sink.host);
  await setOption(account.prisma, 'SMTPPort', String(sink.port));
  await setOption(account.prisma, 'SMTPFrom', 'noreply@gateway.example.com');
  await setOption(account.prisma, 'ServerAddress', SERVER_ADDRESS);
}

/** Every http(s) link in a mail's text. */
export function linksIn(mail: ReceivedMail): string[] {
  return mail.text.match(/https?:\/\/\S+/g) ?? [];
}

/** A mail queue nobody can reach (nothing listens at port 1): queueing on it times out. */
export function unreachableMailQueue(): { queue: Queue<MailJob>; close(): Promise<void> } {
  const connection: Redis = createProducerConnection('redis://127.0.0.1:1', { retryStrategy: () => 1_000 });
  connection.on('error', () => undefined);
  const queue = createMailQueue(connection, redisPrefix());
  queue.on('error', () => undefined);
  return {
    queue,
    async close() {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    },
  };
}
