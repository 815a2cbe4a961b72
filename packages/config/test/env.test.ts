import { behindEdgeEnvShape, commonEnvShape, DEVELOPMENT_SECRETS, EnvError, env, parseEnv, redisDatabaseIndex, requiredInProduction, tracingEnvShape, z } from '../src';

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

describe('REDIS_URL', () => {
  const redisOnly = z.object({ REDIS_URL: env.redisUrl() });

  it('takes the database index from the path, 0 without one', () => {
    expect(redisDatabaseIndex('redis://127.0.0.1:6379')).toBe(0);
    expect(redisDatabaseIndex('redis://127.0.0.1:6379/')).toBe(0);
    expect(redisDatabaseIndex('rediss://user:secret@redis.internal:6380/9')).toBe(9);
    expect(parseEnv(redisOnly, { REDIS_URL: 'redis://127.0.0.1:6379/15' }).REDIS_URL).toBe('redis://127.0.0.1:6379/15');
  });

  // ioredis reads such a path as NaN and silently stays in database 0.
  it.each(['redis://127.0.0.1:6379/cache', 'redis://127.0.0.1:6379/1/2', 'redis://127.0.0.1:6379/-1'])(
    'refuses %s, whose path is not a database number',
    (url) => {
      expect(() => parseEnv(redisOnly, { REDIS_URL: url })).toThrow(/REDIS_URL: its path must be a database number/);
    },
  );

  it('names the variable when the value is not a URL at all', () => {
    expect(() => parseEnv(redisOnly, { REDIS_URL: 'not-a-url' })).toThrow(
      new EnvError(['REDIS_URL: must be a URL (redis: or rediss:)']),
    );
  });
});

describe('secrets', () => {
  const withSecret = z
    .object({ ...commonEnvShape, PORT: env.port(3000), CRYPTO_SECRET: env.secret() })
    .superRefine(...requiredInProduction('CRYPTO_SECRET'))
    .transform((data) => ({ ...data, CRYPTO_SECRET: data.CRYPTO_SECRET ?? DEVELOPMENT_SECRETS.CRYPTO_SECRET }));

  it('falls back to the development value outside production', () => {
    expect(parseEnv(withSecret, {}).CRYPTO_SECRET).toBe(DEVELOPMENT_SECRETS.CRYPTO_SECRET);
    expect(parseEnv(withSecret, { CRYPTO_SECRET: 's'.repeat(32) }).CRYPTO_SECRET).toBe('s'.repeat(32));
  });

  it('requires the secret in production and rejects short ones', () => {
    expect(() => parseEnv(withSecret, { NODE_ENV: 'production' })).toThrow(/CRYPTO_SECRET: is required in production/);
    expect(() => parseEnv(withSecret, { CRYPTO_SECRET: 'short' })).toThrow(/CRYPTO_SECRET: must be at least 32 characters/);
  });

  it('lists secret problems together with the problems of other fields', () => {
    expect(() => parseEnv(withSecret, { NODE_ENV: 'production', PORT: 'abc' })).toThrow(
      new EnvError(['PORT: Invalid input: expected number, received NaN', 'CRYPTO_SECRET: is required in production']),
    );
    expect(() => parseEnv(withSecret, { CRYPTO_SECRET: 'short', PORT: 'abc' })).toThrow(
      new EnvError(['PORT: Invalid input: expected number, received NaN', 'CRYPTO_SECRET: must be at least 32 characters']),
    );
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

describe('tracing', () => {
  const schema = z.object(tracingEnvShape);

  it('is off unless an OTLP endpoint is set', () => {
    expect(parseEnv(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toEqual({});
    expect(parseEnv(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318', OTEL_SERVICE_NAME: 'relay-eu' })).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4318',
      OTEL_SERVICE_NAME: 'relay-eu',
    });
  });

  it('takes only an http(s) endpoint', () => {
    expect(() => parseEnv(schema, { OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});
