// docker-compose.yml, statically (no Docker engine here): what a user running `docker compose up`
// would notice if it were wrong.
import {
  cidrContains,
  durationMs,
  envFileKeys,
  environmentVariablesReadBy,
  environmentVariablesReadByServices,
  parseDockerfile,
  parseYaml,
  METRICS_PORTS,
  nodeRuntime,
  readRepoFile,
  SERVICE_PORTS,
  SERVICES,
} from './support';

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string | string[];
  ports?: string[];
  expose?: string[];
  network_mode?: string;
  networks?: string[] | Record<string, { ipv4_address?: string } | null>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean; interval?: string };
  restart?: string;
  stop_grace_period?: string;
  read_only?: boolean;
}

interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  networks?: Record<string, { internal?: boolean; ipam?: { config?: { subnet?: string; ip_range?: string }[] } } | null>;
}

const compose = parseYaml<ComposeFile>(readRepoFile('docker-compose.yml'));
const devOverride = parseYaml<ComposeFile>(readRepoFile('infra', 'compose', 'dev.yml'));
const services = compose.services;

/** A service of a compose file; a missing one fails the test that needs it, naming it. */
function serviceIn(file: ComposeFile, name: string): ComposeService {
  const found = file.services[name];
  if (!found) throw new Error(`no service "${name}" in the compose file`);
  return found;
}

const serviceNamed = (name: string) => serviceIn(compose, name);
const DATA_SERVICES = ['account', 'relay', 'worker'] as const;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** Settings the image itself sets (infra/docker/Dockerfile), which compose must not blank out. */
const SET_BY_IMAGE = ['NODE_ENV'];
const SECRETS = ['SESSION_SECRET', 'CRYPTO_SECRET', 'STRIPE_API_SECRET', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_PRICE_ID', 'ROOT_PASSWORD', 'DATABASE_URL', 'REDIS_URL'];

/** `KEY: ${KEY:-}`: the operator's value from .env, or unset (the service's default) when empty. */
const passedThrough = (key: string, value: string) => value === `\${${key}:-}`;

function networksOf(service: ComposeService): string[] {
  const networks = service.networks ?? ['default'];
  return (Array.isArray(networks) ? networks : Object.keys(networks)).sort();
}

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, Redis, the one-shot migration and the five services', () => {
    expect(Object.keys(services).sort()).toEqual(['account', 'console', 'edge', 'migrate', 'postgres', 'redis', 'relay', 'worker']);
  });

  it('publishes a port for the edge only, and no service shares the host network', () => {
    const publishing = Object.entries(services).filter(([, s]) => (s.ports ?? []).length > 0).map(([name]) => name);
    expect(publishing).toEqual(['edge']);
    expect(serviceNamed('edge').ports).toEqual(['${EDGE_PUBLISHED_PORT:-3000}:3000']);
    // The edge's metrics listener stays on the project network, for a scraper in the stack.
    expect(serviceNamed('edge').environment?.EDGE_METRICS_PORT).toBe(String(METRICS_PORTS.edge));
    for (const service of Object.values(services)) expect(service.network_mode).toBeUndefined();
  });

  it('builds every Modelgate service from the one Dockerfile with its APP', () => {
    for (const name of [...SERVICES, 'migrate']) {
      expect(serviceNamed(name).build).toEqual({ context: '.', dockerfile: 'infra/docker/Dockerfile', args: { APP: name } });
    }
  });

  it('keeps Redis data (append-only file) and never evicts keys, as BullMQ requires', () => {
    const command = serviceNamed('redis').command ?? [];
    expect(command[0]).toBe('redis-server');
    expect(command.join(' ')).toContain('--appendonly yes');
    expect(command.join(' ')).toContain('--maxmemory-policy noeviction');
  });

  it('health-checks PostgreSQL, Redis and every service (services on /readyz)', () => {
    expect(serviceNamed('postgres').healthcheck?.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(serviceNamed('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const name of SERVICES) {
      expect(serviceNamed(name).healthcheck?.test).toEqual(['CMD', 'node', '/app/probe.mjs', '/readyz']);
    }
    // A finished one-shot job must not be reported unhealthy.
    expect(serviceNamed('migrate').healthcheck).toEqual({ disable: true });
  });

  it('starts services only once what they need is ready, and after the migrations succeeded', () => {
    expect(serviceNamed('migrate').depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(serviceNamed('migrate').restart).toBe('no');
    for (const name of DATA_SERVICES) {
      expect(serviceNamed(name).depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
    }
    expect(serviceNamed('edge').depends_on).toEqual({
      account: { condition: 'service_healthy' },
      relay: { condition: 'service_healthy' },
      console: { condition: 'service_healthy' },
    });
    // The console needs nothing but its own files.
    expect(serviceNamed('console').depends_on).toBeUndefined();
  });

  it('wires the services to each other on the ports they listen on', () => {
    for (const name of SERVICES) {
      expect(serviceNamed(name).environment?.[`${name.toUpperCase()}_PORT`]).toBe(String(SERVICE_PORTS[name]));
    }
    expect(serviceNamed('edge').environment).toMatchObject({
      RELAY_URL: 'http://relay:3001',
      ACCOUNT_URL: 'http://account:3002',
      CONSOLE_URL: 'http://console:3004',
    });
    for (const name of DATA_SERVICES) {
      expect(serviceNamed(name).environment).toMatchObject({
        DATABASE_URL: 'postgresql://postgres:${POSTGRES_PASSWORD}@postgres:5432/modelgate',
        REDIS_URL: 'redis://redis:6379',
      });
    }
    expect(serviceNamed('migrate').environment).toEqual({ DATABASE_URL: 'postgresql://postgres:${POSTGRES_PASSWORD}@postgres:5432/modelgate' });
    expect(serviceNamed('postgres').environment).toEqual({ POSTGRES_DB: 'modelgate', POSTGRES_PASSWORD: '${POSTGRES_PASSWORD}' });
  });

  it('gives every service time to drain before it is killed', () => {
    for (const name of SERVICES) {
      const service = serviceNamed(name);
      expect(service.restart).toBe('unless-stopped');
      expect(service.read_only).toBe(true);
      const configured = service.environment?.SHUTDOWN_TIMEOUT_MS;
      const drainMs = configured === undefined || passedThrough('SHUTDOWN_TIMEOUT_MS', configured) ? DEFAULT_SHUTDOWN_TIMEOUT_MS : Number(configured);
      expect(durationMs(service.stop_grace_period ?? '10s')).toBeGreaterThan(drainMs);
    }
  });
});

describe('docker-compose.yml: what each service is given and can reach', () => {
  it.each(SERVICES)('%s gets exactly the variables its src/env.ts reads (and Node reads), and no env_file of everything', (name) => {
    expect(serviceNamed(name).env_file).toBeUndefined();
    const runtimeKeys = Object.keys(nodeRuntime().services[name] ?? {});
    const expected = [...environmentVariablesReadBy(name).filter((key) => !SET_BY_IMAGE.includes(key)), ...runtimeKeys].sort();
    expect(Object.keys(serviceNamed(name).environment ?? {}).sort()).toEqual(expected);
  });

  it.each(SERVICES)('%s runs with exactly its memory settings of infra/node-runtime.json (none for the edge and the console)', (name) => {
    const runtime = nodeRuntime().services;
    const runtimeKeys = new Set(Object.values(runtime).flatMap((settings) => Object.keys(settings)));
    const environment = serviceNamed(name).environment ?? {};
    const given = Object.fromEntries(Object.entries(environment).filter(([key]) => runtimeKeys.has(key)));
    expect(given).toEqual(runtime[name] ?? {});
  });

  it('gives each secret only to the services that use it: the edge and the console none, the worker its data URLs and CRYPTO_SECRET', () => {
    const secretsOf = (name: string) => SECRETS.filter((key) => key in (serviceNamed(name).environment ?? {}));
    expect(secretsOf('edge')).toEqual([]);
    expect(secretsOf('console')).toEqual([]);
    expect(secretsOf('worker')).toEqual(['CRYPTO_SECRET', 'DATABASE_URL', 'REDIS_URL']);
    expect(secretsOf('relay')).toEqual(['CRYPTO_SECRET', 'DATABASE_URL', 'REDIS_URL']);
    expect(secretsOf('account')).toEqual(SECRETS);
    expect(secretsOf('migrate')).toEqual(['DATABASE_URL']);
  });

  it('takes operator settings from .env by name, never blanking what the image sets', () => {
    for (const name of SERVICES) {
      const environment = serviceNamed(name).environment ?? {};
      for (const key of SET_BY_IMAGE) expect(environment).not.toHaveProperty(key);
      // Every other interpolation hands through the variable of the same name (a typo would drop a setting).
      const otherwise: Record<string, string> = {
        DATABASE_URL: 'postgresql://postgres:${POSTGRES_PASSWORD}@postgres:5432/modelgate',
        TRUSTED_PROXIES: '${EDGE_TRUSTED_PROXIES:-}',
      };
      for (const [key, value] of Object.entries(environment)) {
        if (value.includes('${') && !passedThrough(key, value)) expect({ key, value }).toEqual({ key, value: otherwise[key] });
      }
    }
  });

  it('listens on every interface inside the containers (HOST)', () => {
    for (const name of SERVICES) expect(serviceNamed(name).environment?.HOST).toBe('0.0.0.0');
  });

  it('puts the edge on a network of its own with relay, account and console, at a fixed address relay and account alone trust', () => {
    const subnet = compose.networks?.['edge-net']?.ipam?.config?.[0];
    const edgeNetworks = serviceNamed('edge').networks as Record<string, { ipv4_address?: string }>;
    expect(Object.keys(edgeNetworks)).toEqual(['edge-net']);
    const edgeAddress = edgeNetworks['edge-net']?.ipv4_address ?? '';
    expect(cidrContains(subnet?.subnet ?? '', edgeAddress)).toBe(true);
    // Addresses handed out to the other containers never include the edge's.
    expect(cidrContains(subnet?.ip_range ?? '', edgeAddress)).toBe(false);
    for (const name of ['relay', 'account']) {
      expect(networksOf(serviceNamed(name))).toEqual(['default', 'edge-net']);
      expect(serviceNamed(name).environment?.TRUSTED_PROXIES).toBe(edgeAddress);
    }
    // The console is reached by the edge and reaches nothing else.
    expect(networksOf(serviceNamed('console'))).toEqual(['edge-net']);
    // The edge cannot reach PostgreSQL, Redis or the worker at all.
    for (const name of ['postgres', 'redis', 'migrate', 'worker']) expect(networksOf(serviceNamed(name))).toEqual(['default']);
    // The edge trusts a proxy in front only when the operator names one.
    expect(serviceNamed('edge').environment?.TRUSTED_PROXIES).toBe('${EDGE_TRUSTED_PROXIES:-}');
  });
});

describe('docker-compose.yml: the public address', () => {
  it('hands PUBLIC_URL from .env to the account (links, Secure cookies) and the edge (HSTS), and COOKIE_SECURE only when set', () => {
    for (const name of ['account', 'edge']) expect(serviceNamed(name).environment?.PUBLIC_URL).toBe('${PUBLIC_URL:-}');
    // Unset, the cookie is Secure exactly when PUBLIC_URL is https: nothing forces it off.
    expect(serviceNamed('account').environment?.COOKIE_SECURE).toBe('${COOKIE_SECURE:-}');
    expect(readRepoFile('.env.example')).not.toMatch(/^COOKIE_SECURE=/m);
  });
});

describe('infra/compose/dev.yml (PostgreSQL and Redis for `pnpm start` on the host)', () => {
  it('publishes them on the loopback interface only, in a project of its own', () => {
    expect(devOverride.name).not.toBe(compose.name);
    expect(Object.keys(devOverride.services).sort()).toEqual(['postgres', 'redis']);
    expect(serviceIn(devOverride, 'postgres').ports).toEqual(['127.0.0.1:5432:5432']);
    expect(serviceIn(devOverride, 'redis').ports).toEqual(['127.0.0.1:6379:6379']);
  });
});

describe('.env.example', () => {
  const example = envFileKeys(readRepoFile('.env.example'));
  // Values compose fixes itself; `KEY: ${KEY:-}` entries hand the operator's setting through instead.
  const setByCompose = new Set(
    Object.values(services).flatMap((s) => Object.entries(s.environment ?? {}).filter(([key, value]) => !passedThrough(key, value)).map(([key]) => key)),
  );
  const runtimeStage = parseDockerfile(readRepoFile('infra', 'docker', 'Dockerfile')).stages.at(-1);
  const setByImage = new Set(
    (runtimeStage?.instructions ?? [])
      .filter((i) => i.keyword === 'ENV')
      .flatMap((i) => [...i.args.matchAll(/([A-Z_]+)=/g)].map(([, key = '']) => key)),
  );

  it('documents every variable the services read that compose and the image leave to the operator', () => {
    const undocumented = environmentVariablesReadByServices().filter(
      (key) => !example.documented.includes(key) && !setByCompose.has(key) && !setByImage.has(key),
    );
    expect(undocumented).toEqual([]);
  });

  it('documents every variable docker-compose.yml takes from it', () => {
    const interpolated = [...new Set([...readRepoFile('docker-compose.yml').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map(([, key = '']) => key))];
    expect(interpolated.filter((key) => !example.documented.includes(key))).toEqual([]);
  });

  it('asks for the required secrets, leaving them empty so that nothing insecure runs by default', () => {
    const text = readRepoFile('.env.example');
    for (const key of ['POSTGRES_PASSWORD', 'SESSION_SECRET', 'CRYPTO_SECRET']) {
      expect(text).toMatch(new RegExp(`^${key}=$`, 'm'));
    }
  });

  it('sets nothing that docker-compose.yml overrides anyway', () => {
    expect(example.set.filter((key) => setByCompose.has(key) && key !== 'POSTGRES_PASSWORD')).toEqual([]);
  });
});
