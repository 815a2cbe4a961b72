import type { Call } from './requests';

/**
 * Another gateway in front of the same fake upstream (Portkey's, say), measured in the same run with
 * the same completions load: the side-by-side figure.
 */
export interface Peer {
  /** Its OpenAI base URL, `/v1` included as clients configure it: calls go to `<url>/completions`. */
  url: string;
  /** Its routing headers, `{upstream}` standing for the fake upstream's URL (known once it listens). */
  headers: Record<string, string>;
  /** Its process, when given: its CPU per call is then measured like ours. */
  pid: number | undefined;
}

/** The name the peer's process is watched under (CPU per call, RSS). */
export const PEER_PROCESS = 'peer';

const UPSTREAM_PLACEHOLDER = '{upstream}';

/** `Name: value` arguments as headers, names lower-cased as HTTP/1.1 sends them. */
export function peerHeadersOf(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    if (colon === -1 || !/^[a-z0-9-]+$/.test(name)) throw new Error(`--peer-header ${line}: expected 'Name: value'`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * A call as sent to the peer: our `/v1` path under the peer's base path, with its routing headers
 * (they win over ours, so a peer that wants its own `authorization` gets it).
 */
export function peerCall(call: Call, peer: Peer, upstreamUrl: string): Call {
  const base = new URL(peer.url);
  const headers = Object.fromEntries(Object.entries(peer.headers).map(([name, value]) => [name, value.replaceAll(UPSTREAM_PLACEHOLDER, upstreamUrl)]));
  return {
    ...call,
    origin: base.origin,
    path: `${base.pathname.replace(/\/$/, '')}${call.path.replace(/^\/v1/, '')}`,
    headers: { ...call.headers, ...headers },
  };
}
