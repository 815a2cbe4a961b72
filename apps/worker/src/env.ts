import { commonEnvShape, dataEnvShape, DEVELOPMENT_SECRETS, env, loadEnvOrExit, redisTopologyRefinement, requiredInProduction, tracingEnvShape, z } from '@modelgate/config';

export const workerEnvSchema = z
  .object({
    ...commonEnvShape,
    ...tracingEnvShape,
    ...dataEnvShape,
    WORKER_PORT: env.port(3003),
    /** Decrypts users' webhook signing secrets (balance warnings), sealed by the account service. */
    CRYPTO_SECRET: env.secret(),
    WORKER_CONCURRENCY: env.positiveInt(4),
    /** A job whose lock is not renewed for this long (its worker died) is picked up again. */
    WORKER_LOCK_DURATION_MS: env.positiveInt(30_000),
    /** How often workers look for such stalled jobs. */
    WORKER_STALLED_INTERVAL_MS: env.positiveInt(30_000),
    /** How often unprocessed inbox rows (e.g. received while Redis was down) are re-queued. */
    INBOX_SWEEP_INTERVAL_MS: env.positiveInt(30_000),
    /** Inbox rows younger than this are left to their own job. */
    INBOX_SWEEP_MIN_AGE_MS: env.positiveInt(60_000),
  })
  .superRefine(...requiredInProduction('CRYPTO_SECRET'))
  .superRefine(...redisTopologyRefinement)
  .transform((data) => ({ ...data, CRYPTO_SECRET: data.CRYPTO_SECRET ?? DEVELOPMENT_SECRETS.CRYPTO_SECRET }));

export type WorkerEnv = z.output<typeof workerEnvSchema>;

export function loadWorkerEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  return loadEnvOrExit('worker', workerEnvSchema, source);
}
