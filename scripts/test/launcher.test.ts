// `pnpm start` as a user runs it: pnpm, the launcher and the five services as real processes, on the
// run's private database and Redis prefix and on free ports, stopped the ways a terminal and a
// supervisor stop them.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { basename, dirname, join } from 'node:path';
import type { PrismaClient } from '@modelgate/db';
import { createApiKey, createChannel, createTestPrisma, createUser, setOption } from '@modelgate/testing';
import { type FakeUpstream, startFakeUpstream } from '@modelgate/testing/fake-upstream';
import { freePort, waitFor } from '@modelgate/testing/processes';

jest.setTimeout(60_000);

const REPO_ROOT = join(__dirname, '..', '..');
const MODEL = 'gpt-3.5-turbo-instruct';
/** 15 pieces 200 ms apart: a streamed completion that takes 3 s. */
const SLOW_STREAM = { chunks: 15, chunkDelayMs: 200 };

let prisma: PrismaClient;
let upstream: FakeUpstream;
let apiKey: string;

/** Every process of the launches so far, killed after each test whatever its outcome. */
const launched: number[] = [];

interface Launch {
  pnpm: ChildProcess;
  /** The processes under pnpm once ready: the launcher and the five services (and pnpm's shell, if any). */
  processes: number[];
  edgeUrl: string;
  output(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * One request on a connection of its own, closed after the answer: a kept-alive idle connection
 * would hold a draining service until the client drops it.
 */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `pnpm start` in a process group of its own (as a terminal runs it), ready to take requests. */
async function launch(): Promise<Launch> {
  const [edge, edgeMetrics, relay, account, worker, consoleServer] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const pnpm = spawn('pnpm', ['start'], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      EDGE_PORT: String(edge),
      EDGE_METRICS_PORT: String(edgeMetrics),
      RELAY_PORT: String(relay),
      ACCOUNT_PORT: String(account),
      WORKER_PORT: String(worker),
      CONSOLE_PORT: String(consoleServer),
      RELAY_URL: `http://127.0.0.1:${relay}`,
      ACCOUNT_URL: `http://127.0.0.1:${account}`,
      CONSOLE_URL: `http://127.0.0.1:${consoleServer}`,
      LOG_LEVEL: 'warn',
    },
  });
  let output = '';
  pnpm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  pnpm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    pnpm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exited = false;
  void exit.then(() => (exited = true));
  const edgeUrl = `http://127.0.0.1:${edge}`;
  try {
    await waitFor(async () => {
      if (exited) throw new Error(`pnpm start exited:\n${output.slice(-3000)}`);
      const ready = await Promise.all(
        [edge, relay, account, worker, consoleServer].map((port) => send(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)),
      );
      return ready.every(Boolean);
    }, 'pnpm start to be ready', 40_000, 200);
  } finally {
    launched.push(pnpm.pid as number, ...descendants(pnpm.pid as number));
  }
  return { pnpm, processes: descendants(pnpm.pid as number), edgeUrl, output: () => output, exit };
}

/** A streamed completion through the edge, read to its end; resolves once the upstream started answering. */
async function startSlowCompletion(edgeUrl: string): Promise<{ answer: Promise<{ status: number; body: string }> }> {
  const before = upstream.requests.length;
  const answer = send(`${edgeUrl}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt: 'count slowly', stream: true }),
  });
  await waitFor(() => (upstream.requests[before]?.chunksSent ?? 0) > 0, 'the upstream to start streaming', 10_000, 20);
  // Wrapped: an async function returning the promise itself would wait for it.
  return { answer };
}

function expectCompleteStream(answer: { status: number; body: string }): void {
  expect(answer.status).toBe(200);
  expect(answer.body.match(/"text":" hello"/g)).toHaveLength(SLOW_STREAM.chunks);
  expect(answer.body.trim().endsWith('data: [DONE]')).toBe(true);
}

/** Parent of each running process, from /proc. */
function parents(): Map<number, number> {
  const result = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may contain spaces and parentheses.
      result.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Exited while listing.
    }
  }
  return result;
}

function descendants(pid: number): number[] {
  const tree = parents();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    for (const [child, ppid] of tree) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** The service a process runs (the app directory it works in), if any. */
function serviceOf(pid: number): string | undefined {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return dirname(cwd) === join(REPO_ROOT, 'apps') ? basename(cwd) : undefined;
  } catch {
    return undefined;
  }
}

function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  prisma = createTestPrisma();
  upstream = await startFakeUpstream({ mode: 'slowDrip', ...SLOW_STREAM });
  await setOption(prisma, 'ModelRatio', { [MODEL]: 1 });
  await setOption(prisma, 'CompletionRatio', { [MODEL]: 1 });
  await createChannel(prisma, { baseUrl: upstream.url, models: MODEL });
  const user = await createUser(prisma, { quota: 10_000_000 });
  ({ key: apiKey } = await createApiKey(prisma, user.id, { unlimitedQuota: true }));
});

afterEach(() => {
  // A failed test must not leave services running (they would also hold this run's database).
  for (const pid of launched.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

afterAll(async () => {
  await upstream?.close();
  await prisma?.$disconnect();
});

it('serves the built console at the edge, and Ctrl-C (SIGINT to the process group) lets a 3-second request finish, then exits 0 without ELIFECYCLE', async () => {
  const started = await launch();
  // Each service runs with its memory settings of infra/node-runtime.json, as in production.
  const runtime = (JSON.parse(readFileSync(join(REPO_ROOT, 'infra', 'node-runtime.json'), 'utf8')) as { services: Record<string, Record<string, string>> }).services;
  const services = started.processes.filter((pid) => serviceOf(pid) !== undefined);
  expect(services.map(serviceOf).sort()).toEqual(['account', 'console', 'edge', 'relay', 'worker']);
  for (const pid of services) {
    const name = serviceOf(pid) as string;
    const env = environmentOf(pid);
    const settings = runtime[name] ?? {};
    // The caller's environment wins; a NODE_OPTIONS of the caller's comes after ours.
    expect({ name, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX }).toEqual({ name, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? settings.MALLOC_ARENA_MAX });
    expect({ name, NODE_OPTIONS: env.NODE_OPTIONS }).toEqual({ name, NODE_OPTIONS: [settings.NODE_OPTIONS, process.env.NODE_OPTIONS].filter(Boolean).join(' ') || undefined });
  }
  const page = await send(`${started.edgeUrl}/keys`);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<div id="root"></div>');
  const { answer } = await startSlowCompletion(started.edgeUrl);
  const interruptedAt = Date.now();
  process.kill(-(started.pnpm.pid as number), 'SIGINT');

  expectCompleteStream(await answer);
  expect(Date.now() - interruptedAt).toBeGreaterThan(2_000);
  expect(await started.exit).toEqual({ code: 0, signal: null });
  expect(started.output()).toContain('draining the services');
  expect(started.output()).not.toContain('ELIFECYCLE');
});

it('SIGTERM to the pnpm process alone stops the launcher and every service, draining first', async () => {
  const started = await launch();
  const { processes } = started;
  // The launcher and the five services.
  expect(processes.length).toBeGreaterThanOrEqual(6);
  const { answer } = await startSlowCompletion(started.edgeUrl);
  process.kill(started.pnpm.pid as number, 'SIGTERM');

  expectCompleteStream(await answer);
  expect(await started.exit).toEqual({ code: 0, signal: null });
  await waitFor(() => processes.every((pid) => !alive(pid)), 'every process of pnpm start to exit', 15_000);
});

it('stops the services when pnpm dies without passing anything on (SIGKILL)', async () => {
  const started = await launch();
  const { processes } = started;
  process.kill(started.pnpm.pid as number, 'SIGKILL');
  await waitFor(() => processes.every((pid) => !alive(pid)), 'the orphaned launcher and services to exit', 15_000);
  expect(started.output()).not.toContain('ELIFECYCLE');
});

it('reports every configuration problem of every service at once, before starting any', async () => {
  const pnpm = spawn('pnpm', ['start'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REDIS_URL: 'not-a-url', EDGE_PORT: 'abc', CONSOLE_PORT: 'abc', SESSION_SECRET: 'short', CRYPTO_SECRET: '', NODE_ENV: 'production' },
  });
  let output = '';
  pnpm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  pnpm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => pnpm.once('exit', resolve));

  expect(code).toBe(1);
  const report = output.slice(output.indexOf('modelgate: cannot start.'));
  expect(report.split('\n').filter((line) => line.startsWith('  - ')).sort()).toEqual(
    [
      '  - CRYPTO_SECRET: is required in production (account, relay, worker)',
      '  - EDGE_PORT: Invalid input: expected number, received NaN (account, edge)',
      '  - CONSOLE_PORT: Invalid input: expected number, received NaN (console)',
      '  - REDIS_URL: must be a URL (redis: or rediss:) (account, relay, worker)',
      '  - SESSION_SECRET: must be at least 32 characters (account)',
    ].sort(),
  );
  expect(output).not.toMatch(/TypeError|listening/);
});
