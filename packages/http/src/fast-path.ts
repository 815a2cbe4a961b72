import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { clientAddress, type ProxyTrust } from './trusted-proxies';

/**
 * A request served without Express's per-request setup: node's own object with the few fields the
 * relayed-call handlers read, set the way Express would set them.
 */
export interface DirectRequest extends IncomingMessage {
  url: string;
  method: string;
  requestId: string;
  /** The client address, honouring the app's `trust proxy` setting (as Express's `req.ip`). */
  ip: string | undefined;
  originalUrl: string;
  /** The request path, without the query (as Express's `req.path`). */
  path: string;
  params: Record<string, string>;
  /** The query string parsed as Express 5's default ("simple") parser does. */
  query: Record<string, string | string[] | undefined>;
  /** The matched route pattern, as Express's `req.route` (the metrics' route label). */
  route: { path: string };
  body?: unknown;
}

export interface DirectResponse extends ServerResponse {
  locals: Record<string, unknown>;
}

export type DirectHandler = (req: DirectRequest, res: DirectResponse, next: (err?: unknown) => void) => unknown;

export interface DirectRoute {
  method: 'POST';
  /**
   * The metrics' route label (Express's `req.route.path`): the route pattern, or for a route that
   * stands for several operations, the label of a matched path.
   */
  label: string | ((path: string, params: Record<string, string>) => string);
  /** The route's params when the request path (without query) matches, else undefined. */
  match(path: string): Record<string, string> | undefined;
  handlers: DirectHandler[];
}

/** Raised when a path segment is not valid percent-encoding (Express answers 400 too). */
class ParamDecodeError extends Error {
  readonly status = 400;
  constructor(segment: string) {
    super(`failed to decode param '${segment}'`);
    this.name = 'ParamDecodeError';
  }
}

export function decodeParam(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ParamDecodeError(segment);
  }
}

/**
 * Serves a request the hot way and says so (true), or leaves it untouched for the app (false). It
 * may add what every answer carries (headers, timing) before it declines.
 */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * A service's request listener: each request is offered to `fast` first and goes to `app` (the
 * Express app as an ordinary request listener) only when declined. Express's per-request setup
 * (re-prototyping `req` and `res`, walking the router) costs more than the rest of a hot path such
 * as a relayed call or a proxied request, and its prototypes make every later property access of
 * node's http internals megamorphic; the fast path never pays it.
 */
export function withFastPath(app: RequestListener, fast: FastPath): RequestListener {
  return (req, res) => {
    if (!fast(req, res)) app(req, res);
  };
}

export interface DirectRoutesOptions {
  /** Whose X-Forwarded-For is believed for `req.ip`: the `trust proxy` setting the app was given. */
  trust: ProxyTrust;
  /** The app's per-request middlewares, run before a direct route's handlers (the app runs them too). */
  perRequest: DirectHandler[];
  routes: DirectRoute[];
  /** Answers a direct route's failure on node's objects (the app's error answers). */
  onError: (err: unknown, req: DirectRequest, res: DirectResponse) => void;
}

/**
 * A fast path of POST routes served on node's own objects: each direct route runs the per-request
 * middlewares and its own handlers in Express's order and with its async error semantics, and a
 * failure goes to `onError`. Any other request is declined.
 *
 * Handlers of direct routes may use only what DirectRequest / DirectResponse declare.
 */
export function directRoutes(options: DirectRoutesOptions): FastPath {
  const { trust, perRequest, routes, onError } = options;
  const chains = routes.map((route) => ({ route, chain: [...perRequest, ...route.handlers] }));

  const run = (chain: DirectHandler[], req: DirectRequest, res: DirectResponse) => {
    let index = 0;
    const next = (err?: unknown): void => {
      // As in Express, any truthy value passed to next() is an error.
      if (err) {
        onError(err, req, res);
        return;
      }
      const handler = chain[index++];
      if (handler === undefined) {
        onError(new Error('a direct route ended without answering'), req, res);
        return;
      }
      try {
        const result = handler(req, res, next) as Promise<unknown> | undefined;
        if (result && typeof result.then === 'function') result.then(undefined, next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };

  return (incoming, response) => {
    if (incoming.method === 'POST') {
      const url = incoming.url ?? '/';
      const queryAt = url.indexOf('?');
      const path = queryAt === -1 ? url : url.slice(0, queryAt);
      for (const { route, chain } of chains) {
        let params: Record<string, string> | undefined;
        let matchError: unknown;
        try {
          params = route.match(path);
        } catch (err) {
          matchError = err;
        }
        if (params === undefined && matchError === undefined) continue;
        const req = decorate(incoming, url, queryAt, path, params ?? {}, route, trust);
        const res = response as DirectResponse;
        res.locals = Object.create(null) as Record<string, unknown>;
        // A malformed param fails after the per-request middlewares, as in Express's router.
        run(matchError === undefined ? chain : [...perRequest, (_req, _res, next) => next(matchError)], req, res);
        return true;
      }
    }
    return false;
  };
}

function decorate(
  incoming: IncomingMessage,
  url: string,
  queryAt: number,
  path: string,
  params: Record<string, string>,
  route: DirectRoute,
  trust: ProxyTrust,
): DirectRequest {
  const req = incoming as DirectRequest;
  req.requestId = '';
  req.originalUrl = url;
  req.path = path;
  req.params = params;
  req.query = queryAt === -1 ? {} : parseQuery(url.slice(queryAt + 1));
  req.route = { path: typeof route.label === 'string' ? route.label : route.label(path, params) };
  req.ip = clientAddress(incoming, trust);
  return req;
}

/** Express's default path matching for a literal path: case-insensitive, one optional trailing slash. */
export function literalPath(path: string): (candidate: string) => Record<string, string> | undefined {
  const lower = path.toLowerCase();
  const withSlash = `${lower}/`;
  return (candidate) => {
    const normalized = candidate.length === lower.length || candidate.length === withSlash.length ? candidate.toLowerCase() : '';
    return normalized === lower || normalized === withSlash ? {} : undefined;
  };
}
