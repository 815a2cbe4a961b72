import http from 'node:http';
import https from 'node:https';

export type UpstreamName = 'relay' | 'account' | 'console';

export interface Upstream {
  name: UpstreamName;
  target: URL;
  /** Keep-alive pool shared by every request to this service. */
  agent: http.Agent;
}

/**
 * Idle pooled sockets are closed after this long, well before our services' own keep-alive timeout
 * (65 s), so the edge never writes a request onto a socket the service is closing.
 */
const FREE_SOCKET_TIMEOUT_MS = 30_000;

export function createUpstream(name: UpstreamName, url: string): Upstream {
  const target = new URL(url);
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    // No cap: each proxied call holds its socket for as long as its answer streams (agents hold
    // streams for minutes), so a cap would queue new calls behind open streams. The process's
    // file-descriptor limit bounds the client side and this side alike.
    maxSockets: Infinity,
    maxFreeSockets: 512,
    timeout: FREE_SOCKET_TIMEOUT_MS,
    scheduling: 'lifo',
  };
  const agent = target.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  return { name, target, agent };
}

function hasPathPrefix(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url.charCodeAt(prefix.length);
  // end of string, '/' or '?': `/v1beta` must not count as `/v1`, nor `/apix` as `/api`.
  return Number.isNaN(next) || next === 47 || next === 63;
}

/** The edge's own paths (its probes): exactly these, with or without a query. */
function isExactPath(url: string, path: string): boolean {
  if (!url.startsWith(path)) return false;
  const next = url.charCodeAt(path.length);
  return Number.isNaN(next) || next === 63;
}

/**
 * The public path families: the relay's two API versions, the management API, the edge's own
 * probes ('other') and the console, which gets every other path (its pages and files).
 */
export type RouteFamily = 'v1' | 'v1beta' | 'api' | 'other' | 'console';

export const ROUTE_FAMILIES: readonly RouteFamily[] = ['v1', 'v1beta', 'api', 'other', 'console'];

/** The family of a raw request URL; the relay's prefixes are tested first, as the hot path. */
export function routeFamilyOf(url: string): RouteFamily {
  if (hasPathPrefix(url, '/v1')) return 'v1';
  if (hasPathPrefix(url, '/v1beta')) return 'v1beta';
  if (hasPathPrefix(url, '/api')) return 'api';
  if (isExactPath(url, '/healthz') || isExactPath(url, '/readyz')) return 'other';
  return 'console';
}

/** Which service serves a family; undefined for the paths the edge answers itself. */
export function upstreamOf(family: RouteFamily): UpstreamName | undefined {
  if (family === 'v1' || family === 'v1beta') return 'relay';
  if (family === 'api') return 'account';
  return family === 'console' ? 'console' : undefined;
}
