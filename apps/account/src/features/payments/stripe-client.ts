import Stripe from 'stripe';

let cached: { key: string; client: Stripe } | undefined;

/**
 * The Stripe SDK aimed at `apiBase` (STRIPE_API_BASE: Stripe itself, or a local fake in tests and
 * staging). Rebuilt only when the base or the secret option changes.
 */
export function stripeClient(apiBase: string, secret: string): Stripe {
  const key = `${apiBase}\n${secret}`;
  if (cached?.key === key) return cached.client;
  const url = new URL(apiBase);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const client = new Stripe(secret, {
    host: url.hostname,
    port: Number(url.port || (protocol === 'http' ? 80 : 443)),
    protocol,
    // One retry, made safe by the idempotency key (the trade_no) on every create.
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
  });
  cached = { key, client };
  return client;
}
