import { CountedCounter, CountedHistogram, type CounterSeries, type HistogramSeries, notFound } from '@modelgate/http';
import express, { type Express, type RequestHandler } from 'express';
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { FailureReason } from '../proxy/proxy-failures';
import { ROUTE_FAMILIES, type RouteFamily, type UpstreamName } from '../proxy/upstreams';

type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx';

function statusClassOf(status: number): StatusClass {
  if (status < 200) return '1xx';
  if (status < 300) return '2xx';
  if (status < 400) return '3xx';
  if (status < 500) return '4xx';
  return '5xx';
}

function perStatusClass<T>(make: (cls: StatusClass) => T): Record<StatusClass, T> {
  return { '1xx': make('1xx'), '2xx': make('2xx'), '3xx': make('3xx'), '4xx': make('4xx'), '5xx': make('5xx') };
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

const STARTED = Symbol('edge.started');
const DURATION = Symbol('edge.duration');

/** A response being timed: its start and series ride on it, so one shared listener serves all. */
type TimedResponse = ServerResponse & { [STARTED]: number; [DURATION]: Record<StatusClass, HistogramSeries<'route' | 'status_class'>> };

function observeDuration(this: TimedResponse): void {
  if (this.headersSent) this[DURATION][statusClassOf(this.statusCode)].observe((performance.now() - this[STARTED]) / 1000);
}

export function createEdgeMetrics(options: { defaultMetrics: boolean }): EdgeMetrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  // Counted on every request: in plain numbers, handed to prom-client when scraped.
  const responses = new CountedCounter({
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
  const duration = new CountedHistogram({
    name: 'edge_request_duration_seconds',
    help: 'Requests on the public port, from arrival to the end of the answer, by route family and status class',
    labelNames: ['route', 'status_class'] as const,
    // Up to the long model streams the edge carries.
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  // Bound once: no label set is looked up per request.
  const responsesOf = (upstream: UpstreamName) => perStatusClass((cls) => responses.labels({ upstream, status_class: cls }));
  const responseSeries: Record<UpstreamName, Record<StatusClass, CounterSeries<'upstream' | 'status_class'>>> = {
    relay: responsesOf('relay'),
    account: responsesOf('account'),
    console: responsesOf('console'),
  };
  const durationSeries = Object.fromEntries(
    ROUTE_FAMILIES.map((route) => [route, perStatusClass((cls) => duration.labels({ route, status_class: cls }))]),
  ) as Record<RouteFamily, Record<StatusClass, HistogramSeries<'route' | 'status_class'>>>;
  return {
    registry,
    countResponse(upstream, status) {
      responseSeries[upstream][statusClassOf(status)].inc();
    },
    timeRequest(family, res) {
      const timed = res as TimedResponse;
      timed[STARTED] = performance.now();
      timed[DURATION] = durationSeries[family];
      timed.on('close', observeDuration);
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
