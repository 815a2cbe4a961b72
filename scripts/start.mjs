// `pnpm start` (and `pnpm dev` with --watch): checks PostgreSQL and Redis, builds the apps, applies
// migrations, then runs the four services in this terminal with one merged JSON log until Ctrl-C.
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const SERVICES = ['account', 'relay', 'worker', 'edge'];
const databaseUrl = process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/modelgate';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

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

const missing = [];
if (!(await reachable(databaseUrl, 5432))) missing.push(`PostgreSQL is not reachable at ${new URL(databaseUrl).host}`);
if (!(await reachable(redisUrl, 6379))) missing.push(`Redis is not reachable at ${new URL(redisUrl).host}`);
if (missing.length > 0) {
  console.error(`modelgate: cannot start.\n${missing.map((m) => `  - ${m}`).join('\n')}\n` +
    'Start them (or run `docker compose -f docker-compose.yml -f infra/compose/dev.yml up -d postgres redis`), or point DATABASE_URL / REDIS_URL at yours.');
  process.exit(1);
}

run('pnpm', watch ? ['run', 'db:generate'] : ['run', 'build']);
run('pnpm', ['run', 'db:migrate']);

const children = SERVICES.map((name) => {
  const cwd = join(root, 'apps', name);
  const [command, args] = watch
    ? [join(root, 'node_modules/.bin/tsx'), ['watch', 'src/index.ts']]
    : [process.execPath, ['--enable-source-maps', 'dist/index.js']];
  const child = spawn(command, args, { cwd, stdio: 'inherit', env: process.env });
  child.on('exit', (code, signal) => {
    child.exited = true;
    if (!stopping) {
      console.error(`modelgate: ${name} exited (${signal ?? code}); stopping the others`);
      stop(code || 1);
    } else if (children.every((c) => c.exited)) {
      process.exit(exitCode);
    }
  });
  return child;
});

let stopping = false;
let exitCode = 0;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  for (const child of children) if (!child.exited) child.kill('SIGTERM');
  if (children.every((c) => c.exited)) process.exit(exitCode);
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
