import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Paths pino censors in every log object: credentials must never reach a log line. */
export const REDACTED_PATHS = [
  'password',
  'original_password',
  'new_password',
  'secret',
  'key',
  'token',
  'access_token',
  'apiKey',
  'api_key',
  'totp_secret',
  'backup_codes',
  '*.password',
  '*.original_password',
  'body.code',
  'body.password',
  '*.body.code',
  '*.body.password',
  '*.secret',
  '*.key',
  '*.token',
  '*.apiKey',
  '*.api_key',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-goog-api-key"]',
  'req.headers["stripe-signature"]',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-goog-api-key"]',
  'headers["stripe-signature"]',
];

const SECRET_QUERY = /([?&](?:key|api_key|token|access_token)=)[^&#\s]*/gi;

/** Removes secret-bearing query values (Gemini's `?key=`) from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[Redacted]');
}

export interface CreateLoggerOptions {
  service: string;
  level?: LoggerOptions['level'];
  destination?: DestinationStream;
}

export function createLogger({ service, level = 'info', destination }: CreateLoggerOptions): Logger {
  return pino(
    {
      level,
      base: { service },
      redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; id?: string }) => ({
          method: req.method,
          url: req.url ? redactUrl(req.url) : undefined,
        }),
      },
    },
    destination,
  );
}
