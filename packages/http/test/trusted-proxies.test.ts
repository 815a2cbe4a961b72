import type { IncomingMessage } from 'node:http';
import { parseIpAllowList } from '@modelgate/schemas';
import { clientAddress, trustProxiesIn } from '../src';

const requestFrom = (peer: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('client address behind TRUSTED_PROXIES', () => {
  const edge = trustProxiesIn(parseIpAllowList('10.0.0.0/24,::1'));

  it('is the TCP peer when the peer is not a trusted proxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress(requestFrom('198.51.100.1', '10.1.2.3'), edge)).toBe('198.51.100.1');
    // Another private address is not a proxy unless listed.
    expect(clientAddress(requestFrom('10.0.1.5', '10.1.2.3'), edge)).toBe('10.0.1.5');
  });

  it('is what a trusted peer forwards, IPv4 peers on dual-stack sockets included', () => {
    expect(clientAddress(requestFrom('10.0.0.7', '203.0.113.5'), edge)).toBe('203.0.113.5');
    expect(clientAddress(requestFrom('::ffff:10.0.0.7', '203.0.113.5'), edge)).toBe('203.0.113.5');
    expect(clientAddress(requestFrom('::1', '2001:db8::9'), edge)).toBe('2001:db8::9');
  });

  it('stops at the first untrusted hop, ignoring what a client wrote before it', () => {
    // The client sent "6.6.6.6"; the trusted proxy 10.0.0.1 appended the client's real address.
    expect(clientAddress(requestFrom('10.0.0.2', '6.6.6.6, 203.0.113.5, 10.0.0.1'), edge)).toBe('203.0.113.5');
  });

  it('is the peer when a trusted proxy forwarded nothing', () => {
    expect(clientAddress(requestFrom('10.0.0.2'), edge)).toBe('10.0.0.2');
  });

  it('believes nobody with an empty list', () => {
    const nobody = trustProxiesIn(parseIpAllowList(''));
    expect(clientAddress(requestFrom('127.0.0.1', '203.0.113.5'), nobody)).toBe('127.0.0.1');
  });
});
