// `pnpm start` (and `pnpm dev` with --watch): builds the apps (the console's web app included), checks
// the configuration of every service, checks PostgreSQL and Redis, applies migrations, then runs the
// five services in this terminal with one merged JSON log until Ctrl-C. The console is then at the
// edge's root, http://127.0.0.1:3000/. Under --watch the services restart on changes to their
// sources, and the console's web app is built once at start: for hot reload of its pages run
// `pnpm dev` in apps/console as well.
//
// Stopping. The services run in process groups of their own, so a terminal's Ctrl-C reaches only pnpm
// and this launcher, which sends each service one SIGTERM: they drain their in-flight requests (up to
// SHUTDOWN_TIMEOUT_MS) and exit, and the launcher exits 0 once all exited cleanly. One Ctrl-C arrives
// here twice (from the terminal, and forwarded by pnpm); a signal more than a second after the first
// means "stop now": the services are killed. The launcher stops the services when its parent dies
// without telling it, and the services stop when the launcher dies (their IPC channel closes).
// package.json runs this file with `exec`: without it pnpm's `sh -c` sits in between, dies of a
// SIGTERM without passing it on, and turns a clean stop after Ctrl-C into exit code 130 (ELIFECYCLE).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const SERVICES = ['account', 'relay', 'worker', 'console', 'edge'];
/** Signals closer together than this are one Ctrl-C (the terminal's and pnpm's copy). */
const SAME_STOP_MS = 1000;
const PARENT_POLL_MS = 1000;
/** Memory settings per service, the ones production runs with (infra/node-runtime.json). */
const RUNTIME = JSON.parse(readFileSync(join(root, 'infra', 'node-runtime.json'), 'utf8')).services;

/**
 * A service's environment: its runtime settings, then the caller's. A NODE_OPTIONS of the caller's
 * comes after ours, so its flags win while ours stay.
 */
function serviceEnv(name) {
  const settings = RUNTIME[name] ?? {};
  const env = { ...settings, ...process.env };
  if (settings.NODE_OPTIONS && process.env.NODE_OPTIONS) env.NODE_OPTIONS = `${settings.NODE_OPTIONS} ${process.env.NODE_OPTIONS}`;
  return env;
}

function reachable(url, defaultPort) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    socket.setTimeout(2000);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(false));
  });
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (result.status !== 0) {
    console.error(`modelgate: \`${command} ${args.join(' ')}\` failed`);
    process.exit(result.status ?? 1);
  }
}

/** How a service is run: its bundle, or its sources under tsx (`watch` restarts it on changes). */
function serviceCommand(name, extraArgs = [], { watchSources = watch } = {}) {
  const cwd = join(root, 'apps', name);
  if (!watch) return { cwd, command: process.execPath, args: ['--enable-source-maps', 'dist/index.js', ...extraArgs] };
  const tsx = join(root, 'node_modules/.bin/tsx');
  return { cwd, command: tsx, args: [...(watchSources ? ['watch'] : []), 'src/index.ts', ...extraArgs] };
}

/** Problems each service finds in the environment (`--check-config`), all services at once. */
async function configurationProblems() {
  const reports = await Promise.all(
    SERVICES.map((name) => new Promise((resolve) => {
      const { cwd, command, args } = serviceCommand(name, ['--check-config'], { watchSources: false });
      const child = spawn(command, args, { cwd, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.once('error', (err) => resolve({ name, code: 1, output: err.message }));
      child.once('close', (code) => resolve({ name, code, output }));
    })),
  );
  // One line per problem, with the services that reported it (REDIS_URL is read by three).
  const services = new Map();
  for (const { name, code, output } of reports) {
    if (code === 0) continue;
    const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
    for (const line of lines.length > 0 ? lines : [`exited with code ${code}`]) {
      services.set(line, [...(services.get(line) ?? []), name]);
    }
  }
  return [...services].map(([problem, names]) => `${problem} (${names.join(', ')})`);
}

const problems = [];
if (watch) {
  run('pnpm', ['run', 'db:generate']);
  // The console's server serves the built app even under --watch.
  run('pnpm', ['--filter', '@modelgate/console', 'exec', 'vite', 'build', '--config', 'vite.config.mjs', '--logLevel', 'warn']);
} else {
  run('pnpm', ['run', 'build']);
}
problems.push(...(await configurationProblems()));
if (problems.length === 0) {
  // The services accepted these URLs (or their defaults, the same as here).
  const databaseUrl = process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/modelgate';
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (!(await reachable(databaseUrl, 5432))) problems.push(`PostgreSQL is not reachable at ${new URL(databaseUrl).host}`);
  if (!(await reachable(redisUrl, 6379))) problems.push(`Redis is not reachable at ${new URL(redisUrl).host}`);
  if (problems.length > 0) {
    problems.push('start them (or run `docker compose -f docker-compose.yml -f infra/compose/dev.yml up -d postgres redis`), or point DATABASE_URL / REDIS_URL at yours');
  }
}
if (problems.length > 0) {
  console.error(`modelgate: cannot start.\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exit(1);
}

run('pnpm', ['run', 'db:migrate']);

let stopRequestedAt;
let exitCode = 0;

const children = SERVICES.map((name) => {
  const { cwd, command, args } = serviceCommand(name);
  // detached: a process group of its own, out of reach of the terminal's Ctrl-C. The IPC channel
  // tells the service when this launcher is gone.
  const child = spawn(command, args, { cwd, env: serviceEnv(name), detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.on('exit', (code, signal) => {
    child.exited = true;
    if (stopRequestedAt === undefined) {
      console.error(`modelgate: ${name} exited (${signal ?? code}); stopping the others`);
      stop(code || 1);
    } else if (code !== 0 && exitCode === 0) {
      console.error(`modelgate: ${name} exited (${signal ?? code}) while stopping`);
      exitCode = 1;
    }
    if (children.every((c) => c.exited)) process.exit(exitCode);
  });
  return child;
});

function stop(code) {
  stopRequestedAt = Date.now();
  exitCode = code;
  for (const child of children) if (!child.exited) child.kill('SIGTERM');
}

function onSignal(signal) {
  if (stopRequestedAt === undefined) {
    console.error(`modelgate: ${signal}: draining the services (Ctrl-C again to stop at once)`);
    stop(0);
  } else if (Date.now() - stopRequestedAt >= SAME_STOP_MS) {
    console.error(`modelgate: ${signal} again: stopping at once`);
    exitCode = 1;
    // The whole group: under --watch, tsx and the service it runs.
    for (const child of children) {
      try {
        if (!child.exited) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => onSignal(signal));

// A parent that died without a signal to pass on (pnpm killed with SIGKILL, a closed shell) leaves
// this process to init: stop then too, rather than serve on as an orphan.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid && stopRequestedAt === undefined) {
    console.error('modelgate: the parent process exited; stopping the services');
    stop(0);
  }
}, PARENT_POLL_MS).unref();
