import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { CountedHistogram, type HistogramSeries } from './counted-metrics';

/**
 * What the metrics read of a request: node's, with the routing fields Express sets (a handler that
 * serves a request without Express sets `route` itself).
 */
export interface MeteredRequest extends IncomingMessage {
  /** Always set on a server's request (node types it optional for client responses). */
  method: string;
  originalUrl: string;
  /** The matched route; its pattern is the route label. */
  route?: { path?: unknown };
  /** Express's mount path, read for route patterns with wildcards. */
  baseUrl?: string;
  /** Express's request path, read when no route matched. */
  path?: string;
}

export interface ServiceMetrics {
  registry: Registry;
  /**
   * Times every request; the route label is the matched route, never the raw path. It works on
   * node's objects: Express runs it, and so can a handler that bypasses Express.
   */
  middleware: (req: MeteredRequest, res: ServerResponse, next: () => void) => void;
  /** `GET /metrics` in Prometheus text format. */
  handler: RequestHandler;
}

export interface ServiceMetricsOptions {
  /** Process metrics (CPU, memory, event loop, GC). Default true. */
  defaultMetrics?: boolean;
}

const SLASH = 47;

/** Paths answered outside any router that keep their own label; everything else unmatched is one label. */
const OWN_LABEL_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

/**
 * The path a route's router is mounted at. `req.baseUrl` says it while the route runs, but Express
 * resets it when an error leaves the router, so a 4xx thrown by `/api/user/login` would be labelled
 * `/user/login`. The mount path is the request path minus as many segments as the route pattern has.
 */
function mountPathOf(req: MeteredRequest, pattern: string): string {
  if (/[*{(]/.test(pattern)) return req.baseUrl ?? '';
  const url = req.originalUrl;
  const query = url.indexOf('?');
  let end = query === -1 ? url.length : query;
  if (end > 1 && url.charCodeAt(end - 1) === SLASH) end -= 1;
  // A trailing slash of the pattern (and the root pattern `/`) starts no segment.
  const patternEnd = pattern.charCodeAt(pattern.length - 1) === SLASH ? pattern.length - 1 : pattern.length;
  for (let i = 0; i < patternEnd && end > 0; i++) {
    if (pattern.charCodeAt(i) === SLASH) end = url.lastIndexOf('/', end - 1);
  }
  return end > 0 ? url.slice(0, end) : '';
}

/** Low-cardinality route label: the Express route pattern with its mount path, or a fixed word. */
function routeLabel(req: MeteredRequest): string {
  const path = req.route?.path;
  const pattern = Array.isArray(path) ? path.join(',') : path;
  if (typeof pattern === 'string') return `${mountPathOf(req, Array.isArray(path) ? String(path[0]) : pattern)}${pattern}`;
  return req.path !== undefined && OWN_LABEL_PATHS.has(req.path) ? req.path : 'unmatched';
}

export function createServiceMetrics(service: string, options: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const httpDuration = new CountedHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP requests by route and status (count and latency)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  // Series bound per method, route and status: the histogram's own lookup hashes the label set.
  const children = new Map<string, HistogramSeries<'method' | 'route' | 'status'>>();
  const middleware: ServiceMetrics['middleware'] = (req, res, next) => {
    const started = performance.now();
    res.once('close', () => {
      const route = routeLabel(req);
      const status = res.statusCode;
      const key = `${req.method} ${status} ${route}`;
      let child = children.get(key);
      if (child === undefined) {
        child = httpDuration.labels({ method: req.method, route, status: String(status) });
        children.set(key, child);
      }
      child.observe((performance.now() - started) / 1000);
    });
    next();
  };
  const handler: RequestHandler = async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
  };
  return { registry, middleware, handler };
}
