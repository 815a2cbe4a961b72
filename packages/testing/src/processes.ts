// Real processes for fault tests: a private redis-server the test may stop, freeze or restart
// (never the shared one), and a service started as its own process so it can be killed.
import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { testDatabaseUrl } from './database';
import { redisPrefix, testRedisUrl } from './redis';

type Falsy = undefined | null | false | 0 | '';

/** Polls `check` until it returns a truthy value (which it resolves to); throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | Falsy> | T | Falsy,
  what: string,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` different free ports. All are held open until every one is known: ports asked for one
 * after another can repeat (the kernel may hand a just-released port out again).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<Server>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * Runs `start` (which picks its ports with freePort/freePorts) again, up to `attempts` times, while
 * it fails because a port was taken in the meantime: a free port is only free until someone binds
 * it, and on a busy machine outgoing connections take ports from the same range.
 */
export async function retryOnPortClash<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= attempts || !(err instanceof Error && err.message.includes('EADDRINUSE'))) throw err;
    }
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface ScratchRedis {
  url: string;
  port: number;
  /** The server's pid while it runs. */
  readonly pid: number | undefined;
  /** (Re)starts the server on the same port, empty, and waits until it answers PING. */
  start(): Promise<void>;
  /** Stops it (SIGTERM by pid) and waits for the exit. */
  stop(): Promise<void>;
}

export interface ScratchRedisOptions {
  /** Default: a free port. */
  port?: number;
  /** More server settings, e.g. `['--databases', '4']`. */
  serverArgs?: string[];
}

/**
 * A private, non-persistent redis-server (requires `redis-server` on PATH), on `port` or a free one.
 * A fixed port keeps parallel test runs of different checkouts on ports set aside for them.
 */
export async function startScratchRedis(options: ScratchRedisOptions = {}): Promise<ScratchRedis> {
  const port = options.port ?? (await freePort());
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const scratch: ScratchRedis = {
    url,
    port,
    get pid() {
      return child?.pid;
    },
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) return;
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(options.serverArgs ?? [])];
      child = spawn('redis-server', args, { stdio: 'ignore' });
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await waitFor(async () => {
          // A refused attempt leaves the probe ended (no retries): the next round connects it again.
          if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
          return (await probe.ping()) === 'PONG';
        }, `redis-server on port ${port}`, 10_000);
      } finally {
        // A probe whose last attempt was refused has ended already: nothing to close.
        if (probe.status === 'ready') await probe.quit();
      }
    },
    async stop() {
      if (!child?.pid) return;
      if (child.signalCode === null && child.exitCode === null) process.kill(child.pid, 'SIGTERM');
      await exited(child);
    },
  };
  await scratch.start();
  return scratch;
}

export interface ServiceProcess {
  readonly pid: number | undefined;
  readyUrl: string;
  /** stdout and stderr so far (JSON log lines), for failure messages. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

export interface ServiceProcessOptions {
  /** The service's TypeScript entry (e.g. apps/worker/src/index.ts), run with tsx in one process. */
  entry: string;
  env: Record<string, string>;
  /** Resolved once this URL answers 200 (e.g. the service's /readyz). */
  readyUrl: string;
  timeoutMs?: number;
}

/**
 * Runs a service as a child process of the test (one node process, so a signal reaches the service
 * itself) and waits until it is ready.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const tsx = pathToFileURL(require.resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, options.entry], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const service: ServiceProcess = {
    get pid() {
      return child.pid;
    },
    readyUrl: options.readyUrl,
    output: () => output,
    exit,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
  let ended = false;
  void exit.then(() => (ended = true));
  try {
    await waitFor(async () => {
      if (ended) throw new Error(`exited before it was ready:\n${output.slice(-2000)}`);
      const response = await fetch(options.readyUrl).catch(() => undefined);
      return response?.status === 200;
    }, `${options.entry} to be ready`, options.timeoutMs ?? 30_000, 100);
  } catch (err) {
    service.kill('SIGKILL');
    throw err;
  }
  return service;
}

/**
 * The payment worker (apps/worker) as its own process on the run's database and Redis prefix;
 * `env` adds or overrides settings (timings of the test at hand).
 */
export async function startWorkerProcess(redisUrl: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  return startServiceProcess({
    entry: join(__dirname, '../../../apps/worker/src/index.ts'),
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    env: {
      DATABASE_URL: testDatabaseUrl(),
      DATABASE_POOL_SIZE: '3',
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix(),
      WORKER_PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
}

/**
 * The relay (apps/relay) as its own process on the run's database and Redis prefix, on a free port:
 * what the account service asks for channel tests. `env` adds or overrides settings.
 */
export async function startRelayProcess(env: Record<string, string> = {}): Promise<ServiceProcess & { url: string }> {
  const port = await freePort();
  const relay = await startServiceProcess({
    entry: join(__dirname, '../../../apps/relay/src/index.ts'),
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    env: {
      DATABASE_URL: testDatabaseUrl(),
      DATABASE_POOL_SIZE: '3',
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: redisPrefix(),
      RELAY_PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  return Object.assign(relay, { url: `http://127.0.0.1:${port}` });
}
