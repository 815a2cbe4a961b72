import { BlockList, isIP } from 'node:net';

/**
 * A key's `allow_ips` (docs/api.md 3.2), parsed once: the account validates and stores it, the relay
 * matches with it. Also the services' TRUSTED_PROXIES.
 */
export interface IpAllowList {
  /** Normalised entries ('192.0.2.1', '10.0.0.0/8', '2001:db8::/32'), duplicates dropped; none: any address. */
  readonly entries: readonly string[];
  /**
   * IPv4 entries as network and mask (unsigned 32-bit), matched with integer arithmetic: BlockList
   * needs a native address object per check (~1.3 us), and the relay checks every request's peer.
   */
  readonly ipv4: readonly Ipv4Range[];
  readonly ipv6: BlockList;
}

interface Ipv4Range {
  network: number;
  mask: number;
}

interface Address {
  address: string;
  family: 4 | 6;
  /** Written as IPv4-mapped IPv6 (`::ffff:a.b.c.d`); `address` is then the IPv4 form. */
  mapped: boolean;
}

const MAPPED_IPV4 = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;
const MAPPED_PREFIX = '::ffff:';

/** Canonical form of an IP address, or undefined when the text is not one. */
function parseAddress(text: string): Address | undefined {
  const family = isIP(text);
  if (family === 4) return { address: text, family: 4, mapped: false };
  // How Node names an IPv4 peer of a dual-stack socket: the common case, without the URL parser.
  if (text.startsWith(MAPPED_PREFIX) && isIP(text.slice(MAPPED_PREFIX.length)) === 4) {
    return { address: text.slice(MAPPED_PREFIX.length), family: 4, mapped: true };
  }
  // A zone id (`fe80::1%eth0`) names an interface of this host, not a client address.
  if (family !== 6 || text.includes('%')) return undefined;
  // The WHATWG URL parser prints IPv6 in RFC 5952 form: lower case, zeros compressed, mapped IPv4 in hex.
  const canonical = new URL(`http://[${text}]`).hostname.slice(1, -1);
  const [, highHex, lowHex] = MAPPED_IPV4.exec(canonical) ?? [];
  if (highHex === undefined || lowHex === undefined) return { address: canonical, family: 6, mapped: false };
  const high = Number.parseInt(highHex, 16);
  const low = Number.parseInt(lowHex, 16);
  return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, family: 4, mapped: true };
}

/** One entry -> its normalised text; throws naming the entry and what is wrong with it. */
function normalizeEntry(entry: string): string {
  const slash = entry.indexOf('/');
  const address = parseAddress(slash === -1 ? entry : entry.slice(0, slash));
  if (!address) throw new Error(`"${entry}" is not an IP address or CIDR range`);
  if (slash === -1) return address.address;
  const prefixText = entry.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(prefixText)) throw new Error(`"${entry}": the prefix length must be a whole number`);
  let bits = Number(prefixText);
  if (address.mapped) {
    if (bits < 96 || bits > 128) throw new Error(`"${entry}": an IPv4-mapped range needs a prefix length from 96 to 128`);
    bits -= 96;
  }
  const maxBits = address.family === 4 ? 32 : 128;
  if (bits > maxBits) throw new Error(`"${entry}": the prefix length must be at most ${maxBits}`);
  return `${address.address}/${bits}`;
}

/** A valid dotted-quad IPv4 address as an unsigned 32-bit number. */
function ipv4Number(address: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function ipv4Range(address: string, bits: number): Ipv4Range {
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { network: (ipv4Number(address) & mask) >>> 0, mask };
}

/**
 * Newline- (or comma-) separated IP addresses and CIDR ranges, IPv4 or IPv6; IPv4-mapped IPv6
 * entries count as the IPv4 they carry. Throws an Error naming the first invalid entry.
 */
export function parseIpAllowList(text: string): IpAllowList {
  const entries = [...new Set(text.split(/[\n,]/).map((entry) => entry.trim()).filter(Boolean).map(normalizeEntry))];
  const ipv4: Ipv4Range[] = [];
  const ipv6 = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    if (isIP(address) === 4) ipv4.push(ipv4Range(address, bits === undefined ? 32 : Number(bits)));
    else if (bits === undefined) ipv6.addAddress(address, 'ipv6');
    else ipv6.addSubnet(address, Number(bits), 'ipv6');
  }
  return { entries, ipv4, ipv6 };
}

/** Whether an address is one of the list's addresses or inside one of its ranges (an empty list holds none). */
export function ipListIncludes(list: IpAllowList, ip: string | undefined): boolean {
  if (list.entries.length === 0) return false;
  const address = ip === undefined ? undefined : parseAddress(ip);
  if (!address) return false;
  if (address.family === 6) return list.ipv6.check(address.address, 'ipv6');
  const number = ipv4Number(address.address);
  return list.ipv4.some(({ network, mask }) => ((number & mask) >>> 0) === network);
}

/** Whether a client address may use the key: any address when the list is empty, none that is not an IP. */
export function ipAllowed(list: IpAllowList, ip: string | undefined): boolean {
  return list.entries.length === 0 || ipListIncludes(list, ip);
}

/**
 * What a per-address abuse limit counts a client as (docs/api.md 3.7): an IPv4 address as itself, an
 * IPv6 address by its /64, the block one subscriber usually holds whole (counting each of its
 * addresses apart would make the limit unlimited). Anything else counts as one unknown address.
 */
export function addressLimitKey(ip: string | undefined): string {
  const address = ip === undefined ? undefined : parseAddress(ip);
  if (!address) return 'unknown';
  if (address.family === 4) return address.address;
  const [head = '', tail] = address.address.split('::');
  const leading = head === '' ? [] : head.split(':');
  const trailing = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [...leading, ...Array<string>(8 - leading.length - trailing.length).fill('0'), ...trailing];
  return `${groups.slice(0, 4).join(':')}::/64`;
}
