import type { IncomingMessage } from 'node:http';

/**
 * The client's address as the edge can vouch for it. With no trusted proxy in front it is the TCP
 * peer; with `trustedHops` proxies in front (each appending to X-Forwarded-For) it is the entry that
 * many steps back from the peer, as Express's `trust proxy = n` computes it. Entries further left
 * were written by the client and are ignored.
 */
export function clientIpOf(req: IncomingMessage, trustedHops: number): string | undefined {
  const peer = req.socket.remoteAddress;
  if (trustedHops === 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : header ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const chain = [peer, ...forwarded.reverse()];
  return chain[Math.min(trustedHops, chain.length - 1)];
}
