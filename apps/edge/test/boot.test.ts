import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { request as httpRequest } from 'undici';
import { freePort, startStandIn } from './support/stand-in-service';

const APP_DIR = path.join(__dirname, '..');
const TSX_CLI = require.resolve('tsx/cli');

function spawnEdge(env: Record<string, string>): ChildProcessWithoutNullStreams {
  // Only what the edge reads: nothing inherited from the test runner's environment leaks in.
  return spawn(process.execPath, [TSX_CLI, 'src/index.ts'], {
    cwd: APP_DIR,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
}

function collect(child: ChildProcessWithoutNullStreams): { stdout: () => string; stderr: () => string; exit: Promise<number | null> } {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { stdout: () => stdout, stderr: () => stderr, exit };
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('boot', () => {
  it('exits 1 on an invalid environment, naming every bad variable', async () => {
    const child = spawnEdge({ EDGE_PORT: 'abc', RELAY_URL: 'nope' });
    const output = collect(child);
    expect(await output.exit).toBe(1);
    expect(output.stderr()).toContain('EDGE_PORT');
    expect(output.stderr()).toContain('RELAY_URL');
    expect(output.stdout()).not.toContain('listening');
  });

  it('serves, logs no per-request lines at info, keeps secrets out of error logs, and stops on SIGTERM', async () => {
    const relay = await startStandIn();
    const port = await freePort();
    const metricsPort = await freePort();
    const child = spawnEdge({
      EDGE_PORT: String(port),
      EDGE_METRICS_PORT: String(metricsPort),
      RELAY_URL: relay.url,
      ACCOUNT_URL: `http://127.0.0.1:${await freePort()}`,
      CONSOLE_URL: `http://127.0.0.1:${await freePort()}`,
      LOG_LEVEL: 'info',
    });
    const output = collect(child);
    try {
      await waitFor(() => output.stdout().includes('edge listening'), 20_000);
      const base = `http://127.0.0.1:${port}`;

      const proxied = await httpRequest(`${base}/v1/models`);
      expect(proxied.statusCode).toBe(200);
      await proxied.body.dump();

      // Metrics (process ones included) on their own port; the public one does not serve them.
      const metrics = await httpRequest(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.statusCode).toBe(200);
      const exposition = await metrics.body.text();
      expect(exposition).toMatch(/^edge_proxied_responses_total\{upstream="relay",status_class="2xx"\} 1$/m);
      expect(exposition).toMatch(/^process_cpu_user_seconds_total /m);
      // There /metrics is a console path (the console is down here: 502).
      const publicMetrics = await httpRequest(`${base}/metrics`);
      expect(publicMetrics.statusCode).toBe(502);
      expect(await publicMetrics.body.text()).not.toContain('edge_proxied_responses_total');

      const down = await httpRequest(`${base}/api/user/self?access_token=SECRET-TOKEN-123`);
      expect(down.statusCode).toBe(502);
      await down.body.dump();

      await waitFor(() => output.stdout().includes('"upstream":"account"'), 5000);
      const lines = output.stdout().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.filter((line) => JSON.stringify(line).includes('/v1/models'))).toEqual([]);
      const failure = lines.find((line) => line.msg === 'upstream request failed' && line.upstream === 'account')!;
      expect(failure).toMatchObject({ level: 'error', upstream: 'account', path: '/api/user/self', errorCode: 'ECONNREFUSED' });
      expect(failure.requestId).toBe(down.headers['x-request-id']);
      expect(output.stdout()).not.toContain('SECRET-TOKEN-123');

      child.kill('SIGTERM');
      expect(await output.exit).toBe(0);
      expect(output.stdout()).toContain('edge stopped');
    } finally {
      child.kill('SIGKILL');
      await relay.stop();
    }
  });
});
