import { commonEnvShape, env, loadEnvOrExit, publicAddressEnvShape, publicUrlOf, tracingEnvShape, z, type EnvSource } from '@modelgate/config';
import type { CorsOrigins } from './features/cors/cors';

/** `*`, or a comma-separated list of exact origins (`scheme://host[:port]`, as browsers send them). */
const corsOrigins = z
  .string()
  .default('*')
  .transform((value, ctx): CorsOrigins => {
    const entries = value.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    if (entries.length === 1 && entries[0] === '*') return '*';
    if (entries.length === 0) ctx.addIssue({ code: 'custom', message: 'lists no origin (use * for any)' });
    for (const entry of entries) {
      let origin: string | undefined;
      try {
        origin = new URL(entry).origin;
      } catch {
        // reported below
      }
      if (origin !== entry) ctx.addIssue({ code: 'custom', message: `"${entry}" is not an origin such as https://app.example.com (or use * alone)` });
    }
    return entries;
  });

export const edgeEnvSchema = z
  .object({
    ...commonEnvShape,
    ...tracingEnvShape,
    /** EDGE_PORT, the listen port, and PUBLIC_URL: when it is https, every answer carries HSTS. */
    ...publicAddressEnvShape,
    /**
     * Prometheus `/metrics`, on a listener of its own (on HOST, as the public one) that the public
     * port never routes to: do not publish or expose it to clients.
     */
    EDGE_METRICS_PORT: env.port(9091),
    RELAY_URL: env.httpUrl('http://127.0.0.1:3001'),
    ACCOUNT_URL: env.httpUrl('http://127.0.0.1:3002'),
    /** The web console's static server: every path that is not /v1, /v1beta, /api or the edge's probes. */
    CONSOLE_URL: env.httpUrl('http://127.0.0.1:3004'),
    MAX_REQUEST_BODY_MB: env.positiveInt(32),
    /** Silence allowed on an upstream connection mid-request; generous because model streams pause. */
    EDGE_UPSTREAM_IDLE_TIMEOUT_MS: env.positiveInt(300_000),
    /** Our services are local or on a private network: a connection that takes longer is a dead host. */
    EDGE_UPSTREAM_CONNECT_TIMEOUT_MS: env.positiveInt(5_000),
    /** Time a client gets to send its request headers (slow-loris guard). */
    EDGE_HEADERS_TIMEOUT_MS: env.positiveInt(30_000),
    /**
     * Reverse proxies in front of the edge (TLS terminator, ingress controller, load balancer) whose
     * X-Forwarded-For/-Proto/-Host are believed when they are the TCP peer, as relay and account
     * believe the edge. None by default: the edge is the public listener, so whoever connects is the
     * client and a client-sent X-Forwarded-For is replaced.
     */
    TRUSTED_PROXIES: env.ipList(''),
    /**
     * Browser origins (docs/api.md 3.6): `/v1*` answers any origin with `*` (keys, not cookies), else the
     * listed ones; `/api` accepts cross-origin credentials only from origins listed here.
     */
    CORS_ORIGINS: corsOrigins,
  })
  .transform((data) => ({ ...data, PUBLIC_URL: publicUrlOf(data) }));

export type EdgeEnv = z.output<typeof edgeEnvSchema>;

export function loadEdgeEnv(source: EnvSource = process.env): EdgeEnv {
  return loadEnvOrExit('edge', edgeEnvSchema, source);
}
