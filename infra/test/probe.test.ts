// infra/docker/probe.mjs: the container health check, run against a real HTTP server.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { repoPath } from './support';

/** Runs the probe as Docker would (asynchronously: the server under test lives in this process). */
function runProbe(env: Record<string, string>, path?: string): Promise<number | null> {
  const child = spawn(process.execPath, [repoPath('infra', 'docker', 'probe.mjs'), ...(path ? [path] : [])], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: 'ignore',
    timeout: 20_000,
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return String((server.address() as AddressInfo).port);
}

describe('probe.mjs', () => {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    requested.push(req.url ?? '');
    res.statusCode = req.url === '/readyz' ? 503 : 200;
    res.end();
  });
  let port: string;

  beforeAll(async () => {
    port = await listen(server);
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("passes when the container's service answers 2xx on /healthz, found through its own port variable", async () => {
    expect(await runProbe({ MODELGATE_SERVICE: 'relay', RELAY_PORT: port })).toBe(0);
    expect(requested).toContain('/healthz');
  });

  it('fails when the service answers an error status on the probed path', async () => {
    expect(await runProbe({ MODELGATE_SERVICE: 'account', ACCOUNT_PORT: port }, '/readyz')).toBe(1);
    expect(requested).toContain('/readyz');
  });

  it('fails when nothing listens on the port', async () => {
    const closed = createServer();
    const freePort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(await runProbe({ MODELGATE_SERVICE: 'edge', EDGE_PORT: freePort })).toBe(1);
  });

  it('passes for the migrate image, a one-shot job without an HTTP server', async () => {
    expect(await runProbe({ MODELGATE_SERVICE: 'migrate' })).toBe(0);
  });
});
