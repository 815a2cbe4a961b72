import { Pool } from 'undici';

export type UpstreamName = 'relay' | 'account';

export interface Upstream {
  name: UpstreamName;
  target: URL;
  /** Keep-alive connections shared by every request to this service. */
  pool: Pool;
  /** The service's path for a raw request URL (the target's own path and query prepended). */
  pathFor(url: string): string;
}

/**
 * Idle pooled connections are closed after this long, well before our services' own keep-alive
 * timeout (65 s), so the edge never writes a request onto a connection the service is closing.
 */
const IDLE_CONNECTION_TIMEOUT_MS = 30_000;

function joinPath(base: string, path: string): string {
  if (!base || base === '/') return path;
  return base.endsWith('/') ? base + path.slice(1) : base + path;
}

export function createUpstream(name: UpstreamName, url: string, connectTimeoutMs: number): Upstream {
  const target = new URL(url);
  const pool = new Pool(target.origin, {
    connect: { timeout: connectTimeoutMs },
    keepAliveTimeout: IDLE_CONNECTION_TIMEOUT_MS,
    keepAliveMaxTimeout: IDLE_CONNECTION_TIMEOUT_MS,
  });
  const base = target.pathname;
  const search = target.search;
  return {
    name,
    target,
    pool,
    pathFor(requestUrl) {
      const path = joinPath(base, requestUrl.startsWith('/') ? requestUrl : `/${requestUrl}`);
      if (!search) return path;
      return path.includes('?') ? path.replace('?', `${search}&`) : path + search;
    },
  };
}

function hasPathPrefix(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url.charCodeAt(prefix.length);
  // end of string, '/' or '?': `/v1beta` must not count as `/v1`, nor `/apix` as `/api`.
  return Number.isNaN(next) || next === 47 || next === 63;
}

/** Which service a raw request URL belongs to; undefined for paths the edge answers itself. */
export function upstreamNameFor(url: string): UpstreamName | undefined {
  if (hasPathPrefix(url, '/v1') || hasPathPrefix(url, '/v1beta')) return 'relay';
  if (hasPathPrefix(url, '/api')) return 'account';
  return undefined;
}
