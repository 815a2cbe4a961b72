import type { IncomingMessage } from 'node:http';
import { ipListIncludes, type IpAllowList } from '@modelgate/schemas';
import proxyaddr from 'proxy-addr';

/** Express's `trust proxy` function: whether what the hop at `address` says about the client is believed. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * TRUSTED_PROXIES (parsed once at boot) as a `trust proxy` function: X-Forwarded-For (and -Proto,
 * -Host) count only from a peer in the list; from anyone else the peer itself is the client.
 */
export function trustProxiesIn(proxies: IpAllowList): ProxyTrust {
  return (address) => ipListIncludes(proxies, address);
}

/**
 * The client's address: the TCP peer, or, while the peer and then each earlier hop of
 * X-Forwarded-For is trusted, the address that hop reports (as Express's `req.ip` computes it).
 */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string | undefined {
  return proxyaddr(req, trust);
}
