import { behindEdgeEnvShape, commonEnvShape, EnvError, env, parseEnv, secretOrDevFallback, z } from '../src';

const schema = z.object({
  PORT: env.port(3000),
  DATABASE_URL: env.databaseUrl(),
  REDIS_URL: env.redisUrl(),
  SECURE: env.boolean(false),
});

describe('parseEnv', () => {
  it('applies defaults and treats empty strings as unset', () => {
    expect(parseEnv(schema, { PORT: '', SECURE: 'true' })).toEqual({
      PORT: 3000,
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/modelgate',
      REDIS_URL: 'redis://127.0.0.1:6379',
      SECURE: true,
    });
  });

  it('lists every problem at once', () => {
    let caught: unknown;
    try {
      parseEnv(schema, { PORT: 'abc', DATABASE_URL: 'mysql://x', REDIS_URL: 'nope', SECURE: 'maybe' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvError);
    const problems = (caught as EnvError).problems.join('\n');
    for (const key of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'SECURE']) expect(problems).toContain(key);
  });
});

describe('secretOrDevFallback', () => {
  const withSecret = z
    .object({ NODE_ENV: z.string().default('development'), CRYPTO_SECRET: z.string().optional() })
    .transform((data, ctx) => ({ ...data, CRYPTO_SECRET: secretOrDevFallback(data, ctx, 'CRYPTO_SECRET', 'd'.repeat(32)) }));

  it('falls back outside production', () => {
    expect(parseEnv(withSecret, {}).CRYPTO_SECRET).toBe('d'.repeat(32));
  });

  it('requires the secret in production and rejects short ones', () => {
    expect(() => parseEnv(withSecret, { NODE_ENV: 'production' })).toThrow(/CRYPTO_SECRET: is required in production/);
    expect(() => parseEnv(withSecret, { CRYPTO_SECRET: 'short' })).toThrow(/at least 32/);
  });
});

describe('listen address and trusted proxies', () => {
  const schema = z.object({ ...commonEnvShape, ...behindEdgeEnvShape });

  it('listen on loopback and trust only loopback proxies by default', () => {
    const parsed = parseEnv(schema, {});
    expect(parsed.HOST).toBe('127.0.0.1');
    expect(parsed.TRUSTED_PROXIES.entries).toEqual(['127.0.0.1/8', '::1']);
  });

  it('accept IP addresses or host names to listen on, and comma-separated addresses and ranges to trust', () => {
    expect(['0.0.0.0', '::', 'localhost', 'relay.internal'].map((HOST) => parseEnv(schema, { HOST }).HOST)).toEqual(['0.0.0.0', '::', 'localhost', 'relay.internal']);
    expect(parseEnv(schema, { TRUSTED_PROXIES: '10.48.0.10, 10.244.0.0/16,fd00::/8' }).TRUSTED_PROXIES.entries).toEqual(['10.48.0.10', '10.244.0.0/16', 'fd00::/8']);
  });

  it('name the variable and the entry that is wrong', () => {
    expect(() => parseEnv(schema, { HOST: 'http://0.0.0.0' })).toThrow(/HOST: must be an IP address or a host name/);
    expect(() => parseEnv(schema, { TRUSTED_PROXIES: '10.48.0.10,edge' })).toThrow(/TRUSTED_PROXIES: "edge" is not an IP address or CIDR range/);
  });
});
