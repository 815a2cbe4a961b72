import type { IncomingMessage } from 'node:http';
import { EnvError, parseEnv } from '@modelgate/config';
import { edgeEnvSchema } from '../src/env';
import { clientIpOf } from '../src/features/proxy/client-ip';

describe('edge environment', () => {
  it('defaults to the local services and the contract limits', () => {
    expect(parseEnv(edgeEnvSchema, {})).toMatchObject({
      EDGE_PORT: 3000,
      RELAY_URL: 'http://127.0.0.1:3001',
      ACCOUNT_URL: 'http://127.0.0.1:3002',
      MAX_REQUEST_BODY_MB: 32,
      EDGE_UPSTREAM_IDLE_TIMEOUT_MS: 300_000,
      EDGE_TRUST_PROXY_HOPS: 0,
      CORS_ORIGINS: '*',
    });
  });

  it('reads CORS_ORIGINS as * or a list of exact origins, naming a malformed entry', () => {
    expect(parseEnv(edgeEnvSchema, { CORS_ORIGINS: ' https://console.example.com, http://localhost:5173 ' }).CORS_ORIGINS).toEqual([
      'https://console.example.com',
      'http://localhost:5173',
    ]);
    for (const bad of ['https://console.example.com/', '*, https://a.example', 'console.example.com', ',']) {
      expect(() => parseEnv(edgeEnvSchema, { CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });

  it('lists every invalid variable at once', () => {
    try {
      parseEnv(edgeEnvSchema, { EDGE_PORT: '70000', ACCOUNT_URL: 'ftp://x', MAX_REQUEST_BODY_MB: '0' });
      throw new Error('expected an EnvError');
    } catch (err) {
      expect(err).toBeInstanceOf(EnvError);
      const problems = (err as EnvError).problems.join('\n');
      expect(problems).toMatch(/EDGE_PORT/);
      expect(problems).toMatch(/ACCOUNT_URL/);
      expect(problems).toMatch(/MAX_REQUEST_BODY_MB/);
    }
  });
});

describe('client address behind trusted proxies', () => {
  const requestFrom = (peer: string, forwardedFor?: string) =>
    ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

  it('is the TCP peer when no proxy is trusted, whatever the header says', () => {
    expect(clientIpOf(requestFrom('198.51.100.1', '1.2.3.4'), 0)).toBe('198.51.100.1');
  });

  it('steps back one entry per trusted proxy, ignoring what the client wrote before them', () => {
    const req = requestFrom('10.0.0.2', '6.6.6.6, 203.0.113.5, 10.0.0.1');
    expect(clientIpOf(req, 1)).toBe('10.0.0.1');
    expect(clientIpOf(req, 2)).toBe('203.0.113.5');
  });

  it('stops at the farthest known address when fewer hops are present than trusted', () => {
    expect(clientIpOf(requestFrom('10.0.0.2', '203.0.113.5'), 3)).toBe('203.0.113.5');
    expect(clientIpOf(requestFrom('10.0.0.2'), 2)).toBe('10.0.0.2');
  });
});
