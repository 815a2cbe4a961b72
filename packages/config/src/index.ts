import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { parseIpAllowList, publicAddressText } from '@modelgate/schemas';
import { z } from 'zod';

/** Raised when the environment does not satisfy a service's schema; lists every problem at once. */
export class EnvError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid environment:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'EnvError';
  }
}

export type EnvSource = Record<string, string | undefined>;

export function parseEnv<S extends z.ZodType>(schema: S, source: EnvSource): z.output<S> {
  // Empty strings mean "unset", as in shell `FOO= cmd`.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  throw new EnvError(
    result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  );
}

/**
 * On a service's command line: parse the environment, print each problem on a line of its own and
 * exit (0 when there is none). `pnpm start` runs every service this way before starting any, to
 * report the problems of all services at once.
 */
export const CHECK_CONFIG_FLAG = '--check-config';

/** Parses the environment or prints the problems and exits 1: a service must not boot half-configured. */
export function loadEnvOrExit<S extends z.ZodType>(service: string, schema: S, source: EnvSource): z.output<S> {
  const checkOnly = process.argv.includes(CHECK_CONFIG_FLAG);
  try {
    const parsed = parseEnv(schema, source);
    if (checkOnly) process.exit(0);
    return parsed;
  } catch (err) {
    if (err instanceof EnvError) {
      process.stderr.write(checkOnly ? err.problems.map((p) => `${p}\n`).join('') : `[${service}] cannot start. ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

const urlWithProtocols = (protocols: string[]) =>
  z.string().refine((v) => protocols.includes(parsedUrl(v)?.protocol ?? ''), `must be a URL (${protocols.join(' or ')})`);

/**
 * The database index a Redis URL selects (`redis://host:port/<n>`; 0 without a path), or undefined
 * when its path is not a number (ioredis would read that as NaN and stay in database 0).
 */
export function redisDatabaseIndex(url: string): number | undefined {
  const path = parsedUrl(url)?.pathname ?? '';
  const match = /^\/?(\d*)$/.exec(path);
  if (!match) return undefined;
  return match[1] ? Number(match[1]) : 0;
}

const REDIS_PROTOCOLS = ['redis:', 'rediss:'];

const redisUrl = z.string().superRefine((value, ctx) => {
  if (!REDIS_PROTOCOLS.includes(parsedUrl(value)?.protocol ?? '')) {
    ctx.addIssue({ code: 'custom', message: `must be a URL (${REDIS_PROTOCOLS.join(' or ')})` });
  } else if (redisDatabaseIndex(value) === undefined) {
    ctx.addIssue({ code: 'custom', message: 'its path must be a database number (redis://host:port/0), or empty' });
  }
});

/** Field builders shared by every service's env schema. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback),
  boolean: (fallback: boolean) => booleanText.default(fallback),
  /** Unset: the service derives the value from other settings. */
  optionalBoolean: () => booleanText.optional(),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  httpUrl: (fallback: string) => urlWithProtocols(['http:', 'https:']).default(fallback),
  databaseUrl: () =>
    urlWithProtocols(['postgresql:', 'postgres:']).default('postgresql://postgres@127.0.0.1:5432/modelgate'),
  redisUrl: () => redisUrl.default('redis://127.0.0.1:6379'),
  /** Namespace for every Redis key and channel, so tests and several deployments can share a server. */
  redisPrefix: () => z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/, 'letters, digits, ":", "_" or "-"').default('mg:'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  nodeEnv: () => z.enum(['development', 'production', 'test']).default('development'),
  /** A listen address: an IP address (`0.0.0.0`, `::` for every interface) or a host name. */
  host: (fallback: string) =>
    z.string().refine((v) => isIP(v) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(v), 'must be an IP address or a host name').default(fallback),
  /** Comma-separated IP addresses and CIDR ranges, parsed once at boot (the allow-list parser). */
  ipList: (fallback: string) =>
    z.string().default(fallback).transform((text, ctx) => {
      try {
        return parseIpAllowList(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Unset: see requiredInProduction and DEVELOPMENT_SECRETS. */
  secret: () => z.string().min(32, 'must be at least 32 characters').optional(),
};

/** Fields every service reads the same way. */
export const commonEnvShape = {
  NODE_ENV: env.nodeEnv(),
  LOG_LEVEL: env.logLevel(),
  SHUTDOWN_TIMEOUT_MS: env.positiveInt(10_000),
  /**
   * Listen address. Loopback by default, so `pnpm start` exposes nothing to the network; the images
   * set `0.0.0.0` (inside a container only another container or the published port can reach it).
   */
  HOST: env.host('127.0.0.1'),
};

/**
 * OpenTelemetry tracing (edge, relay, account, worker): spans are exported over OTLP/HTTP to
 * `{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces` when it is set; unset, tracing is off and costs nothing.
 */
export const tracingEnvShape = {
  OTEL_EXPORTER_OTLP_ENDPOINT: urlWithProtocols(['http:', 'https:']).optional(),
  /** `service.name` of the spans; unset: the service's own name (edge, relay, account, worker). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
};

/**
 * Services behind the edge (relay, account): X-Forwarded-For is believed only when the TCP peer is
 * one of these proxies, else the peer is the client. Loopback by default (the edge of `pnpm start`);
 * deployments name their edge (compose: its fixed address; Kubernetes: the pod network, which the
 * NetworkPolicy limits to edge pods).
 */
export const behindEdgeEnvShape = {
  TRUSTED_PROXIES: env.ipList('127.0.0.1/8,::1'),
};

/**
 * Stand-ins for the secrets outside production, so `pnpm start` works with no configuration. Relay
 * and account must agree on CRYPTO_SECRET, hence one value here.
 */
export const DEVELOPMENT_SECRETS = {
  SESSION_SECRET: 'modelgate-development-session-secret-00',
  CRYPTO_SECRET: 'modelgate-development-crypto-secret-0000',
} as const;

type SecretName = keyof typeof DEVELOPMENT_SECRETS;

/**
 * The bearer token of the relay's internal API (the channel test the account service asks for),
 * derived from CRYPTO_SECRET, which both already share: no second secret to deploy. Never leaves
 * the cluster: the edge forwards only /v1 and /v1beta to the relay.
 */
export function internalApiToken(cryptoSecret: string): string {
  return createHmac('sha256', cryptoSecret).update('modelgate internal api').digest('hex');
}

/**
 * `schema.superRefine(...requiredInProduction('CRYPTO_SECRET'))`: in production the secrets must be
 * set. It runs even when other fields have problems (zod skips object refinements then by default),
 * so a missing secret is listed with every other problem.
 */
export function requiredInProduction(...names: SecretName[]) {
  const refinement = (data: { NODE_ENV?: string } & Partial<Record<SecretName, string>>, ctx: z.RefinementCtx) => {
    if (data.NODE_ENV !== 'production') return;
    for (const name of names) {
      if (data[name] === undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'is required in production' });
    }
  };
  return [refinement, { when: () => true }] as const;
}

/**
 * The address browsers and clients reach the gateway at (docs/api.md 3.7), read by the services that
 * build links or guard browsers with it (account, edge). Unset: the edge on this machine,
 * `http://127.0.0.1:${EDGE_PORT}`; resolve it with `publicUrlOf`.
 */
export const publicAddressEnvShape = {
  EDGE_PORT: env.port(3000),
  PUBLIC_URL: publicAddressText.optional(),
};

export function publicUrlOf(data: { EDGE_PORT: number; PUBLIC_URL?: string | undefined }): string {
  return data.PUBLIC_URL ?? `http://127.0.0.1:${data.EDGE_PORT}`;
}

/** A Redis server's address, as Sentinel and Cluster clients take them. */
export interface RedisNode {
  host: string;
  port: number;
}

/** `host:port,host:port` (IPv6 in brackets: `[::1]:26379`), at least one. */
const redisNodeList = z.string().transform((text, ctx) => {
  const nodes: RedisNode[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = Number(match?.[2]);
    if (!match?.[1] || port < 1 || port > 65535) {
      ctx.addIssue({ code: 'custom', message: `"${item}" is not host:port (a comma-separated list of them)` });
      return z.NEVER;
    }
    nodes.push({ host: match[1].replace(/^\[(.*)\]$/, '$1'), port });
  }
  return nodes;
});

/**
 * Where Redis is (README "Redis topologies"): one server at REDIS_URL; a master found through
 * Sentinel (REDIS_URL gives only the password and database); or a Cluster (REDIS_URL gives only the
 * password, and the database must be 0, the only one a Cluster has).
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; url: string; sentinels: RedisNode[]; name: string }
  | { kind: 'cluster'; url: string; nodes: RedisNode[] };

/** Shared connection fields of the services that use PostgreSQL and Redis; check them with redisTopologyRefinement. */
export const dataEnvShape = {
  DATABASE_URL: env.databaseUrl(),
  REDIS_URL: env.redisUrl(),
  REDIS_PREFIX: env.redisPrefix(),
  REDIS_SENTINELS: redisNodeList.optional(),
  /** The master group the sentinels watch (their `sentinel monitor <name> ...`). */
  REDIS_SENTINEL_NAME: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, ".", "_" or "-"').optional(),
  REDIS_CLUSTER_NODES: redisNodeList.optional(),
  DATABASE_POOL_SIZE: env.positiveInt(10),
};

interface RedisTopologyFields {
  REDIS_URL: string;
  REDIS_SENTINELS?: RedisNode[] | undefined;
  REDIS_SENTINEL_NAME?: string | undefined;
  REDIS_CLUSTER_NODES?: RedisNode[] | undefined;
}

/** `schema.superRefine(...redisTopologyRefinement)`: the Redis variables name one topology, completely. */
export const redisTopologyRefinement = [
  (data: Partial<RedisTopologyFields>, ctx: z.RefinementCtx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (data.REDIS_SENTINELS && data.REDIS_CLUSTER_NODES) problem('REDIS_CLUSTER_NODES', 'cannot be set with REDIS_SENTINELS: choose one topology');
    if (data.REDIS_SENTINELS && !data.REDIS_SENTINEL_NAME) problem('REDIS_SENTINEL_NAME', 'is required with REDIS_SENTINELS');
    if (data.REDIS_SENTINEL_NAME && !data.REDIS_SENTINELS) problem('REDIS_SENTINELS', 'is required with REDIS_SENTINEL_NAME');
    if (data.REDIS_CLUSTER_NODES && data.REDIS_URL && redisDatabaseIndex(data.REDIS_URL) !== 0) {
      problem('REDIS_URL', 'must select database 0 (or none) with REDIS_CLUSTER_NODES: a Cluster has no other');
    }
  },
  // Also when other fields have problems, so every problem is listed at once.
  { when: () => true },
] as const;

/** The topology a service's parsed environment names (checked by redisTopologyRefinement). */
export function redisTargetOf(data: RedisTopologyFields): RedisTarget {
  if (data.REDIS_CLUSTER_NODES) return { kind: 'cluster', url: data.REDIS_URL, nodes: data.REDIS_CLUSTER_NODES };
  if (data.REDIS_SENTINELS && data.REDIS_SENTINEL_NAME) {
    return { kind: 'sentinel', url: data.REDIS_URL, sentinels: data.REDIS_SENTINELS, name: data.REDIS_SENTINEL_NAME };
  }
  return { kind: 'single', url: data.REDIS_URL };
}

export { z };
