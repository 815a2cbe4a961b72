import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import {
  applyMigrations,
  DEFAULT_DATABASE_URL,
  ensureDatabase,
  quoteIdentifier,
  runOnServer,
  withDatabase,
} from '@modelgate/db';
import { deleteKeysWithPrefix } from '@modelgate/testing';
import { freePort } from '@modelgate/testing/processes';
import { Redis } from 'ioredis';

export const REPO_ROOT = resolve(__dirname, '../../..');
const SERVICES = ['account', 'relay', 'worker', 'edge'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface RunningProcess {
  name: string;
  pid: number;
  /** Resolves with the exit code once the process is gone. */
  stop(): Promise<number | null>;
}

export interface Stack {
  upstreamUrl: string;
  relayUrl: string;
  edgeUrl: string;
  /** The four services and the fake upstream, for CPU and RSS readings. */
  processes: RunningProcess[];
  /** Stops every process (services first, gracefully), then drops the database and the Redis keys. */
  stop(): Promise<void>;
}

export interface StackOptions {
  build: boolean;
  /** Checkout whose app bundles (apps/NAME/dist) are run (another build to compare with); default this repository. */
  appsRoot: string;
  logDir: string;
  /** Chunks per streamed answer and the upstream's delay between them. */
  chunks: number;
  chunkDelayMs: number;
  /** Written by relay and edge at exit (`node --cpu-prof`). */
  cpuProfileDir?: string;
  /** Extra node options per service (diagnostics such as --trace-gc). */
  nodeArgs: Partial<Record<ServiceName, string[]>>;
  /** Extra environment per service (e.g. a ledger flush interval to compare). */
  serviceEnv: Partial<Record<ServiceName, Record<string, string>>>;
  log(line: string): void;
  /**
   * Writes the rows the run needs, before the services start (so their caches load them); a Vertex
   * channel on the fake upstream needs the key file of the fake's service account.
   */
  seed(context: { databaseUrl: string; upstreamUrl: string; cryptoSecret: string; vertexServiceAccount: string }): Promise<void>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when an app's bundle is missing or older than its sources or any workspace package's. */
export function bundlesOutdated(): boolean {
  const packageSources = readdirSync(join(REPO_ROOT, 'packages'))
    .map((name) => join(REPO_ROOT, 'packages', name, 'src'))
    .filter(existsSync);
  const sharedNewest = Math.max(...packageSources.map(newestMtime));
  return SERVICES.some((name) => {
    const bundle = join(REPO_ROOT, 'apps', name, 'dist', 'index.js');
    if (!existsSync(bundle)) return true;
    const built = statSync(bundle).mtimeMs;
    return built < sharedNewest || built < newestMtime(join(REPO_ROOT, 'apps', name, 'src'));
  });
}

/**
 * The environment production gives a service (infra/node-runtime.json: memory settings) under the
 * caller's: a NODE_OPTIONS of the caller's comes after ours, so its flags win while ours stay.
 */
function withRuntimeSettings(name: ServiceName, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const runtime = JSON.parse(readFileSync(join(REPO_ROOT, 'infra', 'node-runtime.json'), 'utf8')) as {
    services: Partial<Record<ServiceName, Record<string, string>>>;
  };
  const settings = runtime.services[name] ?? {};
  const merged = { ...settings, ...env };
  if (settings.NODE_OPTIONS && env.NODE_OPTIONS) merged.NODE_OPTIONS = `${settings.NODE_OPTIONS} ${env.NODE_OPTIONS}`;
  return merged;
}

/** Resolves when the process is gone: it exited, or it could not be started at all. */
function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
}

async function stopChild(child: ChildProcess, graceMs: number): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const code = await exited(child);
  clearTimeout(timer);
  return code;
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Polls the readiness URL; fails at once when the process exits, or after a minute. */
async function untilReady(child: ChildProcess, url: string, describe: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    const response = await fetch(url).catch(() => undefined);
    await response?.body?.cancel();
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(describe());
}

/** The fake model provider in its own process (run with tsx); resolves with its URL and its Vertex service account. */
async function startUpstream(options: StackOptions): Promise<{ url: string; vertexServiceAccount: string; process: RunningProcess }> {
  const tsx = pathToFileURL(require.resolve('tsx')).href;
  const serviceAccountFile = join(options.logDir, 'vertex-service-account.json');
  const child = spawn(process.execPath, ['--import', tsx, join(__dirname, 'fake-upstream-server.ts')], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      FAKE_CHUNKS: String(options.chunks),
      FAKE_CHUNK_DELAY_MS: String(options.chunkDelayMs),
      FAKE_VERTEX_SERVICE_ACCOUNT_FILE: serviceAccountFile,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      lines.close();
      resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`the fake upstream exited (${code}) before it listened`)));
  });
  child.stdout!.resume();
  const { url } = JSON.parse(firstLine) as { url: string };
  return {
    url,
    vertexServiceAccount: readFileSync(serviceAccountFile, 'utf8'),
    process: { name: 'fake upstream', pid: child.pid!, stop: () => stopChild(child, 5_000) },
  };
}

/**
 * Builds the apps if needed, creates and migrates a private database, and starts the fake upstream
 * and the four services from their bundles with NODE_ENV=production and production's runtime settings,
 * on free ports.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  if (options.build && options.appsRoot === REPO_ROOT && bundlesOutdated()) {
    options.log('building the apps (pnpm build)');
    const build = spawnSync('pnpm', ['build'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (build.status !== 0) throw new Error('`pnpm build` failed');
  }
  const suffix = randomBytes(5).toString('hex');
  const serverUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const databaseName = `modelgate_bench_${suffix}`;
  const databaseUrl = withDatabase(serverUrl, databaseName);
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const redisPrefix = `mgbench:${suffix}:`;
  const cryptoSecret = randomBytes(24).toString('hex');
  const dropDatabase = () => runOnServer(serverUrl, `DROP DATABASE IF EXISTS ${quoteIdentifier(databaseName)} WITH (FORCE)`);

  for (const name of SERVICES) {
    const bundle = join(options.appsRoot, 'apps', name, 'dist', 'index.js');
    if (!existsSync(bundle)) throw new Error(`${bundle} is missing (build it with \`pnpm build\` in that checkout)`);
  }
  await ensureDatabase(databaseUrl);
  const started: RunningProcess[] = [];
  const stopAll = async () => {
    // Edge first (no new traffic), the relay writes its queued charges on the way out.
    for (const running of [...started].reverse()) await running.stop();
    await dropDatabase();
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await deleteKeysWithPrefix(redis, redisPrefix).finally(() => redis.disconnect());
  };
  try {
    await applyMigrations(databaseUrl);
    const upstream = await startUpstream(options);
    started.push(upstream.process);
    await options.seed({ databaseUrl, upstreamUrl: upstream.url, cryptoSecret, vertexServiceAccount: upstream.vertexServiceAccount });
    const ports = { account: await freePort(), relay: await freePort(), worker: await freePort(), edge: await freePort() };
    const common = {
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      CRYPTO_SECRET: cryptoSecret,
      SESSION_SECRET: randomBytes(24).toString('hex'),
      ROOT_PASSWORD: randomBytes(12).toString('hex'),
      ACCOUNT_PORT: String(ports.account),
      RELAY_PORT: String(ports.relay),
      WORKER_PORT: String(ports.worker),
      EDGE_PORT: String(ports.edge),
      EDGE_METRICS_PORT: String(await freePort()),
      RELAY_URL: `http://127.0.0.1:${ports.relay}`,
      ACCOUNT_URL: `http://127.0.0.1:${ports.account}`,
    };
    for (const name of SERVICES) {
      const profiled = options.cpuProfileDir && (name === 'relay' || name === 'edge');
      const nodeArgs = [
        '--enable-source-maps',
        ...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : []),
        ...(options.nodeArgs[name] ?? []),
      ];
      const logPath = join(options.logDir, `${name}.log`);
      const logFd = openSync(logPath, 'a');
      const child = spawn(process.execPath, [...nodeArgs, 'dist/index.js'], {
        cwd: join(options.appsRoot, 'apps', name),
        // This checkout's runtime settings also for another checkout's bundles (--apps-root), so that
        // an A/B run compares code only; --service-env overrides them.
        env: { ...withRuntimeSettings(name, process.env), ...common, ...options.serviceEnv[name] },
        stdio: ['ignore', logFd, logFd],
      });
      closeSync(logFd);
      if (child.pid === undefined) throw new Error(`${name} could not be started`);
      started.push({ name, pid: child.pid, stop: () => stopChild(child, 20_000) });
      await untilReady(child, `http://127.0.0.1:${ports[name]}/readyz`, () => `${name} is not ready (log: ${logPath}):\n${tail(logPath)}`);
    }
    return {
      upstreamUrl: upstream.url,
      relayUrl: common.RELAY_URL,
      edgeUrl: `http://127.0.0.1:${ports.edge}`,
      processes: started,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }
}
