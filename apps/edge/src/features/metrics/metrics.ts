import { notFound } from '@modelgate/http';
import express, { type Express, type RequestHandler } from 'express';
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
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

/**
 * One counter child counted in a plain number and added to prom-client's child when scraped:
 * prom-client validates and hashes a child's labels on every call, which the hot path skips.
 */
class Tally {
  pending = 0;

  constructor(private readonly child: Counter.Internal) {}

  flush(): void {
    if (this.pending === 0) return;
    this.child.inc(this.pending);
    this.pending = 0;
  }
}

/** One label set of `DurationHistogram`, in plain numbers. */
class DurationSeries {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); past the last bound only `count` has them. */
  readonly inBucket: number[];

  constructor(
    readonly labels: { route: RouteFamily; status_class: StatusClass },
    private readonly bounds: readonly number[],
    private readonly onFirst: (series: DurationSeries) => void,
  ) {
    this.inBucket = bounds.map(() => 0);
  }

  observe(seconds: number): void {
    if (this.count === 0) this.onFirst(this);
    this.count += 1;
    this.sum += seconds;
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= this.bounds[i]!) {
        this.inBucket[i]! += 1;
        return;
      }
    }
  }
}

/**
 * The request duration histogram, counted in plain numbers (as `Tally`) and turned into what
 * prom-client's registry prints only when scraped: the same lines a prom-client Histogram prints,
 * label sets in the order first observed.
 */
class DurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private observed: DurationSeries[] = [];
  private readonly series: Record<RouteFamily, Record<StatusClass, DurationSeries>>;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {
    const onFirst = (series: DurationSeries) => this.observed.push(series);
    this.series = Object.fromEntries(
      ROUTE_FAMILIES.map((route) => [
        route,
        perStatusClass((cls) => new DurationSeries({ route, status_class: cls }, bounds, onFirst)),
      ]),
    ) as Record<RouteFamily, Record<StatusClass, DurationSeries>>;
  }

  byClass(route: RouteFamily): Record<StatusClass, DurationSeries> {
    return this.series[route];
  }

  get() {
    const values = this.observed.flatMap((series) => {
      let cumulative = 0;
      const buckets = this.bounds.map((le, i) => {
        cumulative += series.inBucket[i]!;
        return { metricName: `${this.name}_bucket`, labels: { le, ...series.labels }, value: cumulative };
      });
      return [
        ...buckets,
        { metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...series.labels }, value: series.count },
        { metricName: `${this.name}_sum`, labels: series.labels, value: series.sum },
        { metricName: `${this.name}_count`, labels: series.labels, value: series.count },
      ];
    });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const series of this.observed) {
      series.count = 0;
      series.sum = 0;
      series.inBucket.fill(0);
    }
    this.observed = [];
  }
}

const STARTED = Symbol('edge.started');
const DURATION = Symbol('edge.duration');

/** A response being timed: its start and series ride on it, so one shared listener serves all. */
type TimedResponse = ServerResponse & { [STARTED]: number; [DURATION]: Record<StatusClass, DurationSeries> };

function observeDuration(this: TimedResponse): void {
  if (this.headersSent) this[DURATION][statusClassOf(this.statusCode)].observe((performance.now() - this[STARTED]) / 1000);
}

export function createEdgeMetrics(options: { defaultMetrics: boolean }): EdgeMetrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const tallies: Tally[] = [];
  const responses = new Counter({
    name: 'edge_proxied_responses_total',
    help: 'Responses relayed from the internal services, by service and status class',
    labelNames: ['upstream', 'status_class'] as const,
    registers: [registry],
    collect() {
      for (const tally of tallies) tally.flush();
    },
  });
  const failures = new Counter({
    name: 'edge_proxy_failures_total',
    help: 'Requests the edge answered itself because the service was unreachable, timed out or the body was too large',
    labelNames: ['upstream', 'reason'] as const,
    registers: [registry],
  });
  const duration = new DurationHistogram(
    'edge_request_duration_seconds',
    'Requests on the public port, from arrival to the end of the answer, by route family and status class',
    // Up to the long model streams the edge carries.
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  );
  // Not a prom-client class, but what its registry reads of one: name, help, type and values.
  registry.registerMetric(duration as unknown as Histogram);
  const tally = (upstream: UpstreamName, cls: StatusClass) => {
    const made = new Tally(responses.labels(upstream, cls));
    tallies.push(made);
    return made;
  };
  // Made once: no label object is built per request.
  const responseTallies: Record<UpstreamName, Record<StatusClass, Tally>> = {
    relay: perStatusClass((cls) => tally('relay', cls)),
    account: perStatusClass((cls) => tally('account', cls)),
    console: perStatusClass((cls) => tally('console', cls)),
  };
  return {
    registry,
    countResponse(upstream, status) {
      responseTallies[upstream][statusClassOf(status)].pending += 1;
    },
    timeRequest(family, res) {
      const timed = res as TimedResponse;
      timed[STARTED] = performance.now();
      timed[DURATION] = duration.byClass(family);
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
