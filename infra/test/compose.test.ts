// docker-compose.yml, statically (no Docker engine here): what a user running `docker compose up`
// would notice if it were wrong.
import {
  durationMs,
  envFileKeys,
  environmentVariablesReadByServices,
  parseDockerfile,
  parseYaml,
  METRICS_PORTS,
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
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean; interval?: string };
  restart?: string;
  stop_grace_period?: string;
  read_only?: boolean;
}

interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
}

const compose = parseYaml<ComposeFile>(readRepoFile('docker-compose.yml'));
const devOverride = parseYaml<ComposeFile>(readRepoFile('infra', 'compose', 'dev.yml'));
const services = compose.services;
const DATA_SERVICES = ['account', 'relay', 'worker'] as const;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, Redis, the one-shot migration and the four services', () => {
    expect(Object.keys(services).sort()).toEqual(['account', 'edge', 'migrate', 'postgres', 'redis', 'relay', 'worker']);
  });

  it('publishes a port for the edge only, and no service shares the host network', () => {
    const publishing = Object.entries(services).filter(([, s]) => (s.ports ?? []).length > 0).map(([name]) => name);
    expect(publishing).toEqual(['edge']);
    expect(services.edge.ports).toEqual(['${EDGE_PUBLISHED_PORT:-3000}:3000']);
    // The edge's metrics listener stays on the project network, for a scraper in the stack.
    expect(services.edge.environment?.EDGE_METRICS_PORT).toBe(String(METRICS_PORTS.edge));
    for (const service of Object.values(services)) expect(service.network_mode).toBeUndefined();
  });

  it('builds every Modelgate service from the one Dockerfile with its APP', () => {
    for (const name of [...SERVICES, 'migrate']) {
      expect(services[name].build).toEqual({ context: '.', dockerfile: 'infra/docker/Dockerfile', args: { APP: name } });
    }
  });

  it('keeps Redis data (append-only file) and never evicts keys, as BullMQ requires', () => {
    const command = services.redis.command ?? [];
    expect(command[0]).toBe('redis-server');
    expect(command.join(' ')).toContain('--appendonly yes');
    expect(command.join(' ')).toContain('--maxmemory-policy noeviction');
  });

  it('health-checks PostgreSQL, Redis and every service (services on /readyz)', () => {
    expect(services.postgres.healthcheck?.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(services.redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    for (const name of SERVICES) {
      expect(services[name].healthcheck?.test).toEqual(['CMD', 'node', '/app/probe.mjs', '/readyz']);
    }
    // A finished one-shot job must not be reported unhealthy.
    expect(services.migrate.healthcheck).toEqual({ disable: true });
  });

  it('starts services only once what they need is ready, and after the migrations succeeded', () => {
    expect(services.migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(services.migrate.restart).toBe('no');
    for (const name of DATA_SERVICES) {
      expect(services[name].depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      });
    }
    expect(services.edge.depends_on).toEqual({
      account: { condition: 'service_healthy' },
      relay: { condition: 'service_healthy' },
    });
  });

  it('wires the services to each other on the ports they listen on', () => {
    for (const name of SERVICES) {
      expect(services[name].environment?.[`${name.toUpperCase()}_PORT`]).toBe(String(SERVICE_PORTS[name]));
    }
    expect(services.edge.environment).toMatchObject({ RELAY_URL: 'http://relay:3001', ACCOUNT_URL: 'http://account:3002' });
    for (const name of [...DATA_SERVICES, 'migrate']) {
      expect(services[name].environment).toMatchObject({
        DATABASE_URL: 'postgresql://postgres:${POSTGRES_PASSWORD}@postgres:5432/modelgate',
        REDIS_URL: 'redis://redis:6379',
      });
    }
    expect(services.postgres.environment).toEqual({ POSTGRES_DB: 'modelgate', POSTGRES_PASSWORD: '${POSTGRES_PASSWORD}' });
  });

  it('reads secrets from .env and gives every service time to drain before it is killed', () => {
    for (const name of SERVICES) {
      const service = services[name];
      expect(service.env_file).toBe('.env');
      expect(service.restart).toBe('unless-stopped');
      expect(service.read_only).toBe(true);
      const drainMs = Number(service.environment?.SHUTDOWN_TIMEOUT_MS ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
      expect(durationMs(service.stop_grace_period ?? '10s')).toBeGreaterThan(drainMs);
    }
  });
});

describe('infra/compose/dev.yml (PostgreSQL and Redis for `pnpm start` on the host)', () => {
  it('publishes them on the loopback interface only, in a project of its own', () => {
    expect(devOverride.name).not.toBe(compose.name);
    expect(Object.keys(devOverride.services).sort()).toEqual(['postgres', 'redis']);
    expect(devOverride.services.postgres.ports).toEqual(['127.0.0.1:5432:5432']);
    expect(devOverride.services.redis.ports).toEqual(['127.0.0.1:6379:6379']);
  });
});

describe('.env.example', () => {
  const example = envFileKeys(readRepoFile('.env.example'));
  const setByCompose = new Set(Object.values(services).flatMap((s) => Object.keys(s.environment ?? {})));
  const runtimeStage = parseDockerfile(readRepoFile('infra', 'docker', 'Dockerfile')).stages.at(-1);
  const setByImage = new Set(
    (runtimeStage?.instructions ?? [])
      .filter((i) => i.keyword === 'ENV')
      .flatMap((i) => [...i.args.matchAll(/([A-Z_]+)=/g)].map((m) => m[1])),
  );

  it('documents every variable the services read that compose and the image leave to the operator', () => {
    const undocumented = environmentVariablesReadByServices().filter(
      (key) => !example.documented.includes(key) && !setByCompose.has(key) && !setByImage.has(key),
    );
    expect(undocumented).toEqual([]);
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
