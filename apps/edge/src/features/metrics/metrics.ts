import { notFound } from '@modelgate/http';
import express, { type Express, type RequestHandler } from 'express';
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { FailureReason } from '../proxy/proxy-failures';
import { ROUTE_FAMILIES, type RouteFamily, type UpstreamName } from '../proxy/upstreams';

const UPSTREAMS: UpstreamName[] = ['relay', 'account'];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** Index into STATUS_CLASSES. */
function statusClassIndex(status: number): number {
  return Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1;
}

export interface EdgeMetrics {
  registry: Registry;
  /** One proxied response, by the upstream's status class. */
  countResponse(upstream: UpstreamName, status: number): void;
  /** One request the edge answered itself because proxying failed. */
  countFailure(upstream: UpstreamName, reason: FailureReason): void;
  /**
   * Times a request on the public port from now to the end of its answer (streams included), by
   * route family and status class. Requests the client left before any answer are not counted.
   */
  timeRequest(family: RouteFamily, res: ServerResponse): void;
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
  const duration = new Histogram({
    name: 'edge_request_duration_seconds',
    help: 'Requests on the public port, from arrival to the end of the answer, by route family and status class',
    labelNames: ['route', 'status_class'] as const,
    // Up to the long model streams the edge carries.
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  // Children bound once: no label object is built per request.
  const responseChildren = new Map(
    UPSTREAMS.map((upstream) => [upstream, STATUS_CLASSES.map((cls) => responses.labels(upstream, cls))]),
  );
  const durationChildren = Object.fromEntries(
    ROUTE_FAMILIES.map((family) => [family, STATUS_CLASSES.map((cls) => duration.labels(family, cls))]),
  ) as Record<RouteFamily, Histogram.Internal<'route' | 'status_class'>[]>;
  return {
    registry,
    countResponse(upstream, status) {
      responseChildren.get(upstream)![statusClassIndex(status)].inc();
    },
    timeRequest(family, res) {
      const byClass = durationChildren[family];
      const started = performance.now();
      res.on('close', () => {
        if (res.headersSent) byClass[statusClassIndex(res.statusCode)].observe((performance.now() - started) / 1000);
      });
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
