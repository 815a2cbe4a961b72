import { EnvError, parseEnv } from '@modelgate/config';
import { edgeEnvSchema } from '../src/env';

describe('edge environment', () => {
  it('defaults to the local services and the documented limits (docs/api.md 5)', () => {
    expect(parseEnv(edgeEnvSchema, {})).toMatchObject({
      EDGE_PORT: 3000,
      RELAY_URL: 'http://127.0.0.1:3001',
      ACCOUNT_URL: 'http://127.0.0.1:3002',
      CONSOLE_URL: 'http://127.0.0.1:3004',
      MAX_REQUEST_BODY_MB: 32,
      EDGE_UPSTREAM_IDLE_TIMEOUT_MS: 300_000,
      HOST: '127.0.0.1',
      CORS_ORIGINS: '*',
    });
  });

  it('trusts no proxy in front unless told, and refuses an unreadable TRUSTED_PROXIES naming it', () => {
    expect(parseEnv(edgeEnvSchema, {}).TRUSTED_PROXIES.entries).toEqual([]);
    expect(parseEnv(edgeEnvSchema, { TRUSTED_PROXIES: '10.0.0.0/8, 192.0.2.1' }).TRUSTED_PROXIES.entries).toEqual(['10.0.0.0/8', '192.0.2.1']);
    expect(() => parseEnv(edgeEnvSchema, { TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/TRUSTED_PROXIES: "10.0.0.0\/33": the prefix length must be at most 32/);
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

  it('reads PUBLIC_URL as an absolute http(s) URL without a trailing slash, the local edge when unset', () => {
    expect(parseEnv(edgeEnvSchema, {}).PUBLIC_URL).toBe('http://127.0.0.1:3000');
    expect(parseEnv(edgeEnvSchema, { EDGE_PORT: '3100' }).PUBLIC_URL).toBe('http://127.0.0.1:3100');
    expect(parseEnv(edgeEnvSchema, { PUBLIC_URL: 'https://Gateway.example.com' }).PUBLIC_URL).toBe('https://gateway.example.com');
    expect(() => parseEnv(edgeEnvSchema, { PUBLIC_URL: 'https://gateway.example.com/' })).toThrow(/PUBLIC_URL: must not end with a slash/);
    expect(() => parseEnv(edgeEnvSchema, { PUBLIC_URL: 'gateway.example.com' })).toThrow(/PUBLIC_URL: must be an absolute URL/);
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
