import type { MailJob } from '@modelgate/queue';
import type { OptionValues } from '@modelgate/schemas';
import nodemailer, { type Transporter } from 'nodemailer';

/** The SMTP options (docs/api.md 3.9.1) a mail is sent with; undefined while SMTPServer is empty. */
export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte; otherwise STARTTLS whenever the server offers it. */
  secure: boolean;
  user: string;
  pass: string;
  /** SMTPFrom, else the SMTP account. */
  from: string;
}

export function smtpSettingsOf(options: OptionValues): SmtpSettings | undefined {
  const host = options.SMTPServer.trim();
  if (!host) return undefined;
  const user = options.SMTPAccount.trim();
  return { host, port: options.SMTPPort, secure: options.SMTPSSLEnabled, user, pass: options.SMTPToken, from: options.SMTPFrom.trim() || user };
}

/**
 * Sends plain-text mails with nodemailer. One transporter per SMTP setting, kept while the settings
 * stay the same and replaced when root changes them (read again for every mail).
 */
export class Mailer {
  private current: { key: string; transporter: Transporter } | undefined;

  async send(settings: SmtpSettings, mail: MailJob): Promise<void> {
    await this.transporterFor(settings).sendMail({
      from: settings.from || undefined,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      // Only text goes out: no attachment or embedded content may name a file or a URL to fetch.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  close(): void {
    this.current?.transporter.close();
    this.current = undefined;
  }

  private transporterFor(settings: SmtpSettings): Transporter {
    const { host, port, secure, user, pass } = settings;
    const key = JSON.stringify([host, port, secure, user, pass]);
    if (this.current?.key !== key) {
      this.close();
      const transporter = nodemailer.createTransport({
        host,
        port,
        secure,
        auth: user ? { user, pass } : undefined,
        // A silent server fails the attempt (and the job is retried) instead of holding it for minutes.
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
        logger: false,
        debug: false,
      });
      this.current = { key, transporter };
    }
    return this.current.transporter;
  }
}
