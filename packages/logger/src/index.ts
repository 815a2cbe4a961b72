import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Request and response headers that carry credentials, as pino redaction path segments. */
const CREDENTIAL_HEADERS = ['.authorization', '.cookie', '["set-cookie"]', '["x-goog-api-key"]', '["x-api-key"]', '["stripe-signature"]'];

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
  'backup_code',
  'backup_codes',
  'authorization',
  'cookie',
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
  '*.authorization',
  '*.cookie',
  '*.backup_codes',
  ...CREDENTIAL_HEADERS.flatMap((name) => [`headers${name}`, `*.headers${name}`]),
];

const SECRET_QUERY = /([?&](?:key|api_key|apikey|token|access_token|password|secret|code|signature)=)[^&#\s]*/gi;
const URL_CREDENTIALS = /(\/\/)[^/@\s]+@/g;

/** Removes secret-bearing query values (Gemini's `?key=`) and `user:password@` from a URL before it is logged. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1[Redacted]').replace(URL_CREDENTIALS, '$1[Redacted]@');
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
