import type { PrismaClient } from '@modelgate/db';
import type { Logger } from '@modelgate/logger';
import type { MailJob, PaymentWebhookJob, Queue } from '@modelgate/queue';
import type { RedisClient } from '@modelgate/queue/connections';
import type { AccountEnv } from './env';
import type { AccountMetrics } from './features/metrics/metrics';

/** What the account service runs on; index.ts builds it, app.ts and every feature receive it. */
export interface AccountDeps {
  env: AccountEnv;
  logger: Logger;
  prisma: PrismaClient;
  redis: RedisClient;
  /** Producer of `payment-webhooks` (createPaymentWebhookQueue on a fail-fast connection). */
  paymentQueue: Queue<PaymentWebhookJob>;
  /** Producer of `mail` (createMailQueue on the same connection): the worker sends what is queued. */
  mailQueue: Queue<MailJob>;
  /** `createAccountMetrics()`: HTTP and webhook series, served on `GET /metrics`. */
  metrics: AccountMetrics;
  /** Wall clock in ms; tests move it to cross TOTP steps and lock or pending-login expiries. */
  now?: () => number;
}
