// The console's server as a process (src/index.ts): --check-config, serving, and a clean stop.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startServiceProcess } from '@modelgate/testing/processes';

const ENTRY = join(__dirname, '../src/index.ts');
const TSX = require.resolve('tsx');

it('--check-config lists every problem and exits 1, or exits 0 for a valid environment', () => {
  const check = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', TSX, ENTRY, '--check-config'], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
  const bad = check({ CONSOLE_PORT: 'abc', HOST: 'not a host!' });
  expect(bad.status).toBe(1);
  expect(bad.stderr).toContain('CONSOLE_PORT');
  expect(bad.stderr).toContain('HOST');
  expect(check({ CONSOLE_PORT: '3999' }).status).toBe(0);
});

it('serves the built app, and drains and exits 0 on SIGTERM', async () => {
  const webDir = mkdtempSync(join(tmpdir(), 'console-boot-'));
  writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>Modelgate</title>');
  const port = await freePort();
  const server = await startServiceProcess({
    entry: ENTRY,
    env: { CONSOLE_PORT: String(port), CONSOLE_WEB_DIR: webDir, LOG_LEVEL: 'info' },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
  try {
    const page = await fetch(`http://127.0.0.1:${port}/wallet`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Modelgate</title>');
    server.kill('SIGTERM');
    expect(await server.exit).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('console stopped');
  } finally {
    server.kill('SIGKILL');
    rmSync(webDir, { recursive: true, force: true });
  }
});
