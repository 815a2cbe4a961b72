import { addressLimitKey, ipAllowed, ipListIncludes, parseIpAllowList } from '../src';

describe('parseIpAllowList', () => {
  it('normalises addresses and ranges, one per line, dropping blanks and duplicates', () => {
    const list = parseIpAllowList(' 192.0.2.1 \n\n10.0.0.0/8,2001:DB8:0:0::1\r\n2001:db8::/32\n192.0.2.1');
    expect(list.entries).toEqual(['192.0.2.1', '10.0.0.0/8', '2001:db8::1', '2001:db8::/32']);
  });

  it('reads IPv4-mapped IPv6 entries as the IPv4 they carry', () => {
    expect(parseIpAllowList('::ffff:192.0.2.7\n::FFFF:c000:0208\n::ffff:10.0.0.0/104\n::ffff:198.51.100.0/128').entries)
      .toEqual(['192.0.2.7', '192.0.2.8', '10.0.0.0/8', '198.51.100.0/32']);
  });

  it.each([
    ['not-an-ip', /"not-an-ip" is not an IP address or CIDR range/],
    ['192.0.2.300', /is not an IP/],
    ['192.0.2.1/33', /"192.0.2.1\/33": the prefix length must be at most 32/],
    ['2001:db8::/129', /at most 128/],
    ['10.0.0.0/', /prefix length must be a whole number/],
    ['10.0.0.0/8/9', /prefix length must be a whole number/],
    ['10.0.0.0/-1', /prefix length must be a whole number/],
    ['10.0.0.0/ 8', /prefix length must be a whole number/],
    ['::ffff:10.0.0.0/95', /IPv4-mapped range needs a prefix length from 96 to 128/],
    ['::ffff:10.0.0.0/129', /from 96 to 128/],
    ['fe80::1%eth0', /is not an IP/],
    ['/8', /is not an IP/],
  ])('rejects %j naming the entry', (text, message) => {
    expect(() => parseIpAllowList(`192.0.2.1\n${text}`)).toThrow(message);
  });
});

describe('ipAllowed', () => {
  const list = parseIpAllowList('192.0.2.1\n10.0.0.0/8\n2001:db8::/32\n::ffff:198.51.100.0/120');

  it.each([
    ['192.0.2.1', true],
    ['192.0.2.2', false],
    ['10.255.0.1', true],
    ['11.0.0.1', false],
    ['2001:db8:1::5', true],
    ['2001:db9::5', false],
    ['198.51.100.77', true],
    ['198.51.101.1', false],
  ])('%s -> %s', (ip, allowed) => {
    expect(ipAllowed(list, ip)).toBe(allowed);
  });

  it('matches clients on dual-stack sockets (::ffff:a.b.c.d) against IPv4 entries', () => {
    expect(ipAllowed(list, '::ffff:10.1.2.3')).toBe(true);
    expect(ipAllowed(list, '::ffff:192.0.2.1')).toBe(true);
    expect(ipAllowed(list, '::ffff:192.0.2.9')).toBe(false);
  });

  it('refuses a missing or unreadable client address', () => {
    expect(ipAllowed(list, undefined)).toBe(false);
    expect(ipAllowed(list, 'unknown')).toBe(false);
  });

  it('lets every address through when the list is empty', () => {
    const empty = parseIpAllowList(' \n ');
    expect(empty.entries).toEqual([]);
    expect(ipAllowed(empty, '203.0.113.9')).toBe(true);
    expect(ipAllowed(empty, undefined)).toBe(true);
  });

  it('uses the network of a range written with host bits', () => {
    const hosty = parseIpAllowList('10.1.2.3/16');
    expect(ipAllowed(hosty, '10.1.200.1')).toBe(true);
    expect(ipAllowed(hosty, '10.2.0.1')).toBe(false);
  });
});

describe('ipListIncludes (trusted proxies)', () => {
  it('holds the loopback ranges, IPv4 peers on dual-stack sockets included', () => {
    const loopback = parseIpAllowList('127.0.0.1/8,::1');
    expect(['127.0.0.1', '127.9.9.9', '::ffff:127.0.0.1', '::1'].filter((ip) => ipListIncludes(loopback, ip))).toHaveLength(4);
    expect(['10.0.0.1', '::2', '::ffff:10.0.0.1', 'unknown', undefined].some((ip) => ipListIncludes(loopback, ip))).toBe(false);
  });

  it('matches IPv4 ranges of every prefix length, /0 and /32 included', () => {
    const list = parseIpAllowList('0.0.0.0/0');
    expect(['0.0.0.0', '255.255.255.255', '::ffff:203.0.113.1'].every((ip) => ipListIncludes(list, ip))).toBe(true);
    expect(ipListIncludes(list, '::1')).toBe(false);
    const edges = parseIpAllowList('255.255.255.255/32,128.0.0.0/1');
    expect(['255.255.255.255', '128.0.0.0', '200.1.1.1'].every((ip) => ipListIncludes(edges, ip))).toBe(true);
    expect(['127.255.255.255', '0.0.0.1'].some((ip) => ipListIncludes(edges, ip))).toBe(false);
  });

  it('holds nothing when the list is empty (unlike a key allow-list, which then admits anyone)', () => {
    expect(ipListIncludes(parseIpAllowList(''), '127.0.0.1')).toBe(false);
  });
});

describe('addressLimitKey', () => {
  it('counts an IPv4 client as itself, written plain or IPv4-mapped', () => {
    expect(addressLimitKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressLimitKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('counts every address of one IPv6 /64 as one client, and other /64s apart', () => {
    const key = addressLimitKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(addressLimitKey('2001:DB8:1:2:ffff:eeee:dddd:cccc')).toBe(key);
    expect(addressLimitKey('2001:db8:1:3::1')).not.toBe(key);
    expect(addressLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(addressLimitKey('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('counts what is not an address as one unknown client', () => {
    expect(addressLimitKey(undefined)).toBe('unknown');
    expect(addressLimitKey('not-an-ip')).toBe('unknown');
  });
});
