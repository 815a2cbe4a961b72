import { notFound } from '@modelgate/http';
import express, { type Express, type RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { FailureReason } from '../proxy/proxy-failures';
import type { UpstreamName } from '../proxy/upstreams';

const UPSTREAMS: UpstreamName[] = ['relay', 'account'];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

export interface EdgeMetrics {
  registry: Registry;
  /** One proxied response, by the upstream's status class. */
  countResponse(upstream: UpstreamName, status: number): void;
  /** One request the edge answered itself because proxying failed. */
  countFailure(upstream: UpstreamName, reason: FailureReason): void;
}

export function createEdgeMetrics(options: { defaultMetrics: boolean }): EdgeMetrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const responses = new Counter({
    name: 'edge_proxied_responses_total',
    help: 'Responses relayed from the internal services, by service and status class',
    labelNames: ['upstream', 'status_class'] as const,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'edge_proxy_failures_total',
    help: 'Requests the edge answered itself because the service was unreachable, timed out or the body was too large',
    labelNames: ['upstream', 'reason'] as const,
    registers: [registry],
  });
  // Children bound once: label hashing stays off the per-request path.
  const responseChildren = new Map(
    UPSTREAMS.map((upstream) => [upstream, STATUS_CLASSES.map((cls) => responses.labels(upstream, cls))]),
  );
  return {
    registry,
    countResponse(upstream, status) {
      const byClass = responseChildren.get(upstream)!;
      byClass[Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1].inc();
    },
    countFailure(upstream, reason) {
      failures.labels(upstream, reason).inc();
    },
  };
}

/**
 * The app of the private listener (EDGE_METRICS_PORT): `GET /metrics` in the Prometheus text format,
 * `GET /health` (the detailed health view, `health`), 404 for anything else. The public app serves
 * neither.
 */
export function createMetricsApp(metrics: EdgeMetrics, health: RequestHandler): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  app.get('/health', health);
  app.use(notFound('envelope'));
  return app;
}
