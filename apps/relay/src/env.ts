import {
  behindEdgeEnvShape,
  commonEnvShape,
  dataEnvShape,
  DEVELOPMENT_SECRETS,
  env,
  loadEnvOrExit,
  redisTopologyRefinement,
  requiredInProduction,
  tracingEnvShape,
  z,
} from '@modelgate/config';

export const relayEnvSchema = z
  .object({
    ...commonEnvShape,
    ...tracingEnvShape,
    ...dataEnvShape,
    ...behindEdgeEnvShape,
    RELAY_PORT: env.port(3001),
    CRYPTO_SECRET: env.secret(),
    MAX_REQUEST_BODY_MB: env.positiveInt(32),
    /** Largest whole upstream answer read; a larger one is a 502, read no further than this. */
    MAX_UPSTREAM_BODY_MB: env.positiveInt(64),
    UPSTREAM_CONNECT_TIMEOUT_MS: env.positiveInt(10_000),
    /** Until the upstream's response headers arrive. */
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: env.positiveInt(60_000),
    /** Silence allowed between two chunks of an upstream body. */
    UPSTREAM_IDLE_TIMEOUT_MS: env.positiveInt(120_000),
    /**
     * How often settled charges are written to PostgreSQL (one transaction per batch). Each write has
     * a fixed cost in the relay and the database (at one connection PostgreSQL spent 0.3 to 0.5 ms
     * of CPU per call at 250 ms, about 0.1 ms at 1 s), and the writes delay the calls they
     * interrupt. Balances are enforced from Redis either way; the database lags by up to this long.
     */
    LEDGER_FLUSH_INTERVAL_MS: env.positiveInt(1000),
    /** Most ledger entries written by one transaction (one flush writes up to 20 such batches). */
    LEDGER_BATCH_SIZE: env.positiveInt(2000),
    /** Safety net behind the invalidation messages: keys, users, channels and options are re-read this often. */
    CACHE_REFRESH_INTERVAL_MS: env.positiveInt(30_000),
    /** Requests per minute of an API key without its own `rpm_limit`, shared by every relay instance through Redis; 0 = no limit. */
    RELAY_KEY_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(0),
    /**
     * Failed key checks (unknown, malformed, disabled keys) per client address and minute, shared by
     * every relay instance through Redis; past it: 429, and no database lookup of its keys.
     */
    RELAY_KEY_FAILURES_PER_MINUTE: env.positiveInt(60),
    /** A channel that failed transiently (reset, 429, 5xx) is avoided this long. */
    CHANNEL_COOLDOWN_MS: env.positiveInt(10_000),
  })
  .superRefine(...requiredInProduction('CRYPTO_SECRET'))
  .superRefine(...redisTopologyRefinement)
  .transform((data) => ({ ...data, CRYPTO_SECRET: data.CRYPTO_SECRET ?? DEVELOPMENT_SECRETS.CRYPTO_SECRET }));

export type RelayEnv = z.output<typeof relayEnvSchema>;

export function loadRelayEnv(source: NodeJS.ProcessEnv = process.env): RelayEnv {
  return loadEnvOrExit('relay', relayEnvSchema, source);
}
