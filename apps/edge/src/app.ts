import type { RequestListener } from 'node:http';
import {
  accessLog,
  errorHandler,
  healthDetailHandler,
  type HealthChecks,
  healthRouter,
  notFound,
  requestId,
  trustProxiesIn,
  withFastPath,
} from '@modelgate/http';
import type { Logger } from '@modelgate/logger';
import { isHttpsAddress } from '@modelgate/schemas';
import express, { type Express } from 'express';
import type { EdgeEnv } from './env';
import { createCorsPolicy } from './features/cors/cors';
import { serviceHealthCheck } from './features/health/service-checks';
import { createEdgeMetrics, createMetricsApp, type EdgeMetrics } from './features/metrics/metrics';
import { createEdgeProxy } from './features/proxy/proxy';
import { createUpstream, routeFamilyOf } from './features/proxy/upstreams';

export type EdgeConfig = Pick<
  EdgeEnv,
  | 'RELAY_URL'
  | 'ACCOUNT_URL'
  | 'CONSOLE_URL'
  | 'MAX_REQUEST_BODY_MB'
  | 'EDGE_UPSTREAM_IDLE_TIMEOUT_MS'
  | 'EDGE_UPSTREAM_CONNECT_TIMEOUT_MS'
  | 'TRUSTED_PROXIES'
  | 'CORS_ORIGINS'
  | 'PUBLIC_URL'
>;

export interface EdgeDeps {
  logger: Logger;
  /** Process-wide metrics (CPU, memory, event loop) besides the edge's own; off in tests. */
  defaultMetrics?: boolean;
  /** Deadline for each service's /readyz in the detailed health view. */
  healthTimeoutMs?: number;
}

export interface EdgeApp {
  /** The public entry point: proxied paths on the fast path, everything else by an Express app. */
  app: RequestListener;
  metrics: EdgeMetrics;
  /** `GET /metrics` and `GET /health`, for a listener of its own on EDGE_METRICS_PORT (never the public port). */
  metricsApp: Express;
  /** Closes the pooled upstream connections (after the server has drained). */
  close(): void;
}

/**
 * docs/api.md 3.7: behind an https public address, browsers are told to use nothing but https for a
 * year, subdomains included, so a network attacker cannot downgrade a later visit to plain http.
 */
const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains';

export function buildApp(config: EdgeConfig, deps: EdgeDeps): EdgeApp {
  const { logger } = deps;
  const upstreams = {
    relay: createUpstream('relay', config.RELAY_URL),
    account: createUpstream('account', config.ACCOUNT_URL),
    console: createUpstream('console', config.CONSOLE_URL),
  };
  const metrics = createEdgeMetrics({ defaultMetrics: deps.defaultMetrics ?? false });
  const healthTimeoutMs = deps.healthTimeoutMs ?? 2000;

  // No body parser anywhere: bodies stream through untouched (Stripe signatures, SSE, uploads).
  const proxy = createEdgeProxy({
    upstreams,
    maxBodyMb: config.MAX_REQUEST_BODY_MB,
    connectTimeoutMs: config.EDGE_UPSTREAM_CONNECT_TIMEOUT_MS,
    idleTimeoutMs: config.EDGE_UPSTREAM_IDLE_TIMEOUT_MS,
    trustProxy: trustProxiesIn(config.TRUSTED_PROXIES),
    logger,
    metrics,
    cors: createCorsPolicy(config.CORS_ORIGINS),
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestId());
  if (logger.isLevelEnabled('debug')) app.use(accessLog(logger));
  // Ready with any service down: the edge still serves the others and answers for the missing one
  // with 502 in the caller's dialect, which beats every edge leaving the load balancer. All are
  // reported in the detailed view, on the private listener only: the public port does not tell
  // who asks which internal service is down, nor lets them make the edge call them at will.
  const services: HealthChecks = {
    reported: {
      relay: serviceHealthCheck(upstreams.relay.target, healthTimeoutMs),
      account: serviceHealthCheck(upstreams.account.target, healthTimeoutMs),
      console: serviceHealthCheck(upstreams.console.target, healthTimeoutMs),
    },
  };
  app.use(healthRouter({}, { detailed: false }));
  app.use(notFound('envelope'));
  app.use(errorHandler(logger, 'envelope'));

  const strictTransport = isHttpsAddress(config.PUBLIC_URL);
  return {
    // Every request is timed and every answer carries HSTS when the public address is https; proxied
    // paths go straight to the proxy, the rest (health, 404s) to Express.
    app: withFastPath(app, (req, res) => {
      if (strictTransport) res.setHeader('Strict-Transport-Security', STRICT_TRANSPORT_SECURITY);
      const family = routeFamilyOf(req.url ?? '/');
      metrics.timeRequest(family, res);
      return proxy.handleIfProxied(req, res, family);
    }),
    metrics,
    metricsApp: createMetricsApp(metrics, healthDetailHandler(services, healthTimeoutMs)),
    close() {
      for (const upstream of Object.values(upstreams)) upstream.agent.destroy();
    },
  };
}
