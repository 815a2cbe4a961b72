// Where a user's webhook may point (docs/api.md 3.9.6): public addresses only, unless the operator
// allows private ones. The account service checks a URL when it is saved; the worker checks it
// again when it sends, and pins the connection to addresses it checked (a name may be re-pointed
// at an internal address after it was saved, or between two lookups).
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** A webhook URL that may not be used; the message is written for the user who entered it. */
export class WebhookAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookAddressError';
  }
}

/**
 * Addresses that are not on the public internet: unspecified, "this network", private (RFC 1918),
 * carrier-grade NAT, loopback, link-local, IETF protocol assignments, benchmarking, multicast,
 * reserved and broadcast.
 */
const NON_PUBLIC_IPV4: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/**
 * IPv6 likewise: the IPv4-compatible block (unspecified and loopback included), discard-only,
 * local-use NAT64, unique-local, link-local, the old site-local, multicast. IPv4-mapped, NAT64 and
 * 6to4 addresses carry an IPv4 address and are judged by it.
 */
const NON_PUBLIC_IPV6: readonly [string, number][] = [
  ['::', 96],
  ['100::', 64],
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const nonPublic = new BlockList();
for (const [network, bits] of NON_PUBLIC_IPV4) nonPublic.addSubnet(network, bits, 'ipv4');
for (const [network, bits] of NON_PUBLIC_IPV6) nonPublic.addSubnet(network, bits, 'ipv6');

/** The 8 groups of an IPv6 address (any valid spelling, embedded IPv4 included). */
function ipv6Groups(address: string): number[] {
  // The WHATWG URL parser prints IPv6 compressed, in hex, with an embedded IPv4 as two groups.
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const leading = parse(head);
  const trailing = tail === undefined ? [] : parse(tail);
  return [...leading, ...Array<number>(8 - leading.length - trailing.length).fill(0), ...trailing];
}

function ipv4Of(high: number, low: number): string {
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
function embeddedIpv4(groups: number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return ipv4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Of(g6, g7);
  if (g0 === 0x2002) return ipv4Of(g1, g2);
  return undefined;
}

/** Whether an IP address is on the public internet; anything that is not an IP address is not. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  // A zone id (`fe80::1%eth0`) names an interface of this host.
  if (family !== 6 || address.includes('%')) return false;
  const groups = ipv6Groups(address);
  const ipv4 = embeddedIpv4(groups);
  if (ipv4 !== undefined) return !nonPublic.check(ipv4, 'ipv4');
  return !nonPublic.check(groups.map((group) => group.toString(16)).join(':'), 'ipv6');
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a name resolves to, as the operating system's resolver gives them. */
function resolveAll(hostname: string): Promise<ResolvedAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}

export interface WebhookAddressOptions {
  /** Option WebhookAllowPrivate: private, loopback and other non-public addresses are allowed too. */
  allowPrivate: boolean;
}

/** The host of a URL without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** A webhook URL's form: absolute http(s), a host, no credentials. Throws WebhookAddressError. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookAddressError('must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookAddressError('must be an http or https URL');
  if (hostOf(url) === '') throw new WebhookAddressError('must name a host');
  if (url.username !== '' || url.password !== '') throw new WebhookAddressError('must not contain a user name or password');
  return url;
}

/** Throws unless every address is allowed; a name with no address at all is refused too. */
function checkAddresses(addresses: readonly ResolvedAddress[], options: WebhookAddressOptions): void {
  if (addresses.length === 0) throw new WebhookAddressError('the host has no address');
  if (options.allowPrivate) return;
  if (addresses.some(({ address }) => !isPublicAddress(address))) {
    throw new WebhookAddressError('the host resolves to a private, loopback or otherwise non-public address');
  }
}

/**
 * Checks a webhook URL: its form, then every address its host resolves to (all of them: a client
 * may connect to any). Returns the parsed URL; throws WebhookAddressError, also when the name does
 * not resolve.
 */
export async function checkWebhookUrl(text: string, options: WebhookAddressOptions): Promise<URL> {
  const url = parseWebhookUrl(text);
  const host = hostOf(url);
  const family = isIP(host);
  if (family !== 0) {
    checkAddresses([{ address: host, family }], options);
    return url;
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    throw new WebhookAddressError('the host name does not resolve');
  }
  checkAddresses(addresses, options);
  return url;
}

/**
 * A `lookup` for sockets (net / tls / undici `connect`): resolves like the default one, and fails
 * the connection unless every address passes the same rule. The socket then connects only to those
 * addresses, so nothing can re-point the name between the check and the connection.
 */
export function webhookLookup(options: WebhookAddressOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolveAll(hostname).then(
      (addresses) => {
        const family = lookupOptions.family;
        const wanted = family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
        const [first] = wanted;
        try {
          checkAddresses(addresses, options);
          if (!first) throw new WebhookAddressError('the host has no address of the requested family');
        } catch (err) {
          callback(err as NodeJS.ErrnoException, '');
          return;
        }
        if (lookupOptions.all) callback(null, wanted);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
