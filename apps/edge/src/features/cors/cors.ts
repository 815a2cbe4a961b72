import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UpstreamName } from '../proxy/upstreams';

/** The services whose answers CORS applies to (the console is same-origin). */
export type CorsUpstream = Exclude<UpstreamName, 'console'>;

/** `CORS_ORIGINS`: any origin, or exactly these. */
export type CorsOrigins = '*' | readonly string[];

/** Response headers a browser script may read besides the safelisted ones (retry logic, support). */
const EXPOSED_HEADERS = 'X-Request-Id, Retry-After';
/** A day; browsers cap it lower (Chromium: 2 hours). */
const PREFLIGHT_MAX_AGE = '86400';

/** Request headers a preflight may ask for: exact names, and name prefixes of whole header families. */
function headerAllowList(exact: string[], prefixes: string[]): (name: string) => boolean {
  const names = new Set(exact);
  return (name) => names.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

/** Rules for one route family; the header values are fixed at start, so an answer only copies them. */
class FamilyCors {
  private readonly origins: ReadonlySet<string>;
  /** `*` is answered for any origin only where no credentials are involved. */
  private readonly anyOrigin: boolean;
  /** Vary on preflights: the allowed headers echo the requested ones, and the origin when it is. */
  private readonly preflightVary: string;

  constructor(
    origins: CorsOrigins,
    /** Cookies and Authorization cross-origin: only ever for named origins. */
    private readonly credentials: boolean,
    private readonly methods: string,
    private readonly allowsHeader: (name: string) => boolean,
  ) {
    this.origins = new Set(origins === '*' ? [] : origins);
    this.anyOrigin = origins === '*' && !credentials;
    this.preflightVary = this.anyOrigin ? 'Access-Control-Request-Headers' : 'Origin, Access-Control-Request-Headers';
  }

  /** Sets what lets `origin` read the answer; false when it may not. */
  private allow(res: ServerResponse, origin: string): boolean {
    if (this.anyOrigin) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      return true;
    }
    res.setHeader('Vary', 'Origin');
    if (!this.origins.has(origin)) return false;
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (this.credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
    return true;
  }

  /** Headers of a proxied answer (set before the proxy writes the service's head: nothing is buffered). */
  decorate(res: ServerResponse, origin: string): void {
    if (this.allow(res, origin)) res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
  }

  /** 204 to a preflight; without allow headers when the origin is not allowed (the browser then refuses). */
  answerPreflight(req: IncomingMessage, res: ServerResponse, origin: string): void {
    if (this.allow(res, origin)) {
      res.setHeader('Access-Control-Allow-Methods', this.methods);
      const requested = req.headers['access-control-request-headers'];
      const allowed = requested
        ?.split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(this.allowsHeader)
        .join(', ');
      if (allowed) res.setHeader('Access-Control-Allow-Headers', allowed);
      res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
    }
    res.setHeader('Vary', this.preflightVary);
    res.writeHead(204).end();
  }
}

/**
 * Browser access per docs/api.md 3.6. `/v1*` is called with keys, not cookies: any origin (or those
 * CORS_ORIGINS names) may call it, with the headers the OpenAI, Anthropic and Google browser SDKs
 * send. `/api` uses the session cookie: only origins CORS_ORIGINS names explicitly may call it
 * cross-origin, with credentials; `*` never opens it.
 */
export interface CorsPolicy {
  /**
   * For a request with an Origin header: answers a preflight (true), or sets the CORS headers of
   * the answer to come (false).
   */
  handle(req: IncomingMessage, res: ServerResponse, upstream: CorsUpstream, origin: string): boolean;
}

export function createCorsPolicy(origins: CorsOrigins): CorsPolicy {
  const byUpstream: Record<CorsUpstream, FamilyCors> = {
    relay: new FamilyCors(
      origins,
      false,
      'GET, POST, OPTIONS',
      headerAllowList(
        ['authorization', 'content-type', 'accept', 'user-agent', 'x-api-key', 'x-request-id', 'idempotency-key'],
        ['x-stainless-', 'openai-', 'anthropic-', 'x-goog-'],
      ),
    ),
    account: new FamilyCors(
      origins,
      true,
      'GET, POST, PUT, DELETE, OPTIONS',
      headerAllowList(['authorization', 'content-type', 'accept', 'new-api-user', 'x-request-id'], []),
    ),
  };
  return {
    handle(req, res, upstream, origin) {
      const family = byUpstream[upstream];
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        family.answerPreflight(req, res, origin);
        return true;
      }
      family.decorate(res, origin);
      return false;
    },
  };
}
