import { BlockList, isIP } from 'node:net';

/** `::ffff:1.2.3.4` (an IPv4 client on a dual-stack socket) is the IPv4 address 1.2.3.4. */
export function normalizeIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
}

/**
 * A key's `allow_ips`: newline- (or comma-) separated addresses and CIDR ranges. Entries that do not
 * parse allow nothing, so a typo narrows access instead of opening it.
 */
export class IpAllowList {
  private readonly list = new BlockList();

  constructor(text: string) {
    for (const entry of text.split(/[\n,]/)) {
      const trimmed = entry.trim();
      if (trimmed === '') continue;
      const [address, bits] = trimmed.split('/', 2);
      const normalized = normalizeIp(address);
      const family = isIP(normalized);
      if (family === 0) continue;
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) {
        this.list.addAddress(normalized, type);
        continue;
      }
      const prefix = Number(bits);
      if (Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128)) {
        this.list.addSubnet(normalized, prefix, type);
      }
    }
  }

  allows(ip: string | undefined): boolean {
    if (!ip) return false;
    const normalized = normalizeIp(ip);
    const family = isIP(normalized);
    if (family === 0) return false;
    return this.list.check(normalized, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** True when the text lists no entry at all: any address is allowed. */
  static isUnrestricted(text: string): boolean {
    return text.trim() === '';
  }
}
