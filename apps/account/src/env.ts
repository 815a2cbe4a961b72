import {
  behindEdgeEnvShape,
  commonEnvShape,
  dataEnvShape,
  DEVELOPMENT_SECRETS,
  env,
  loadEnvOrExit,
  publicAddressEnvShape,
  publicUrlOf,
  redisTopologyRefinement,
  requiredInProduction,
  tracingEnvShape,
  z,
} from '@modelgate/config';
import { isHttpsAddress } from '@modelgate/schemas';

export const accountEnvSchema = z
  .object({
    ...commonEnvShape,
    ...tracingEnvShape,
    ...dataEnvShape,
    ...behindEdgeEnvShape,
    /** Seeds the ServerAddress option on first start; https makes the session cookie Secure by default. */
    ...publicAddressEnvShape,
    ACCOUNT_PORT: env.port(3002),
    SESSION_SECRET: env.secret(),
    CRYPTO_SECRET: env.secret(),
    ROOT_USERNAME: z.string().regex(/^[A-Za-z0-9_]{3,20}$/, '3..20 letters, digits or _').default('root'),
    ROOT_PASSWORD: z.string().min(8).max(64).optional(),
    /** Unset: Secure exactly when PUBLIC_URL is https (TLS in front of the edge). */
    COOKIE_SECURE: env.optionalBoolean(),
    MAX_REQUEST_BODY_MB: env.positiveInt(32),
    /** Argon2id memory per password hash (KiB). OWASP's 19 MiB in production; tests lower it. */
    PASSWORD_HASH_MEMORY_KIB: z.coerce.number().int().min(64).max(4_194_304).default(19456),
    STRIPE_API_SECRET: z.string().optional(),
    STRIPE_WEBHOOK_SECRET: z.string().optional(),
    STRIPE_PRICE_ID: z.string().optional(),
    STRIPE_API_BASE: env.httpUrl('https://api.stripe.com'),
    /** The relay's own address (not the edge): the channel test runs there. */
    RELAY_URL: env.httpUrl('http://127.0.0.1:3001'),
  })
  .superRefine(...requiredInProduction('SESSION_SECRET', 'CRYPTO_SECRET'))
  .superRefine(...redisTopologyRefinement)
  .transform((data) => {
    const publicUrl = publicUrlOf(data);
    return {
      ...data,
      PUBLIC_URL: publicUrl,
      COOKIE_SECURE: data.COOKIE_SECURE ?? isHttpsAddress(publicUrl),
      SESSION_SECRET: data.SESSION_SECRET ?? DEVELOPMENT_SECRETS.SESSION_SECRET,
      CRYPTO_SECRET: data.CRYPTO_SECRET ?? DEVELOPMENT_SECRETS.CRYPTO_SECRET,
    };
  });

export type AccountEnv = z.output<typeof accountEnvSchema>;

export function loadAccountEnv(source: NodeJS.ProcessEnv = process.env): AccountEnv {
  return loadEnvOrExit('account', accountEnvSchema, source);
}
