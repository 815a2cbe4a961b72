// The console's static server (src/app.ts) over a temporary folder of fake built files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from '@modelgate/config';
import { createLogger } from '@modelgate/logger';
import type { Express } from 'express';
import request from 'supertest';
import { buildApp } from '../src/app';
import { consoleEnvSchema } from '../src/env';

const INDEX_HTML = '<!doctype html><html><head><script type="module" src="/assets/index-Ab12Cd.js"></script></head><body><div id="root"></div></body></html>';
const logger = createLogger({ service: 'console', level: 'silent' });

let webDir: string;
let app: Express;

beforeAll(() => {
  webDir = mkdtempSync(join(tmpdir(), 'console-web-'));
  mkdirSync(join(webDir, 'assets'));
  writeFileSync(join(webDir, 'index.html'), INDEX_HTML);
  writeFileSync(join(webDir, 'assets/index-Ab12Cd.js'), 'console.log("app");');
  writeFileSync(join(webDir, 'assets/index-Ef34Gh.css'), 'body{margin:0}');
  writeFileSync(join(webDir, 'robots.txt'), 'User-agent: *\nDisallow: /\n');
  app = buildApp(parseEnv(consoleEnvSchema, { CONSOLE_WEB_DIR: webDir }), { logger });
});
afterAll(() => rmSync(webDir, { recursive: true, force: true }));

describe('hashed assets', () => {
  it('are served with their type and cached for a year as immutable', async () => {
    const res = await request(app).get('/assets/index-Ab12Cd.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.text).toBe('console.log("app");');
    expect((await request(app).get('/assets/index-Ef34Gh.css')).headers['content-type']).toMatch(/^text\/css/);
  });

  it('answer 404 in the envelope when missing, never index.html', async () => {
    for (const path of ['/assets/index-Old000.js', '/assets/', '/assets/nested/chunk.js']) {
      const res = await request(app).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ success: false, code: 'not_found' });
    }
  });
});

describe('index.html and the app routes', () => {
  it.each(['/', '/keys', '/admin/channels', '/register?aff=ABCD', '/no/such/page.html'])('GET %s answers index.html, revalidated on every load', async (path) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.text).toBe(INDEX_HTML);
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await request(app).head('/usage');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.text).toBeUndefined();
  });

  it('serves index.html by name and other top-level files with revalidation', async () => {
    const index = await request(app).get('/index.html');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.text).toBe(INDEX_HTML);
    const robots = await request(app).get('/robots.txt');
    expect(robots.headers['content-type']).toMatch(/^text\/plain/);
    expect(robots.headers['cache-control']).toBe('no-cache');
  });

  it('revalidates with the ETag: an unchanged index.html is a 304', async () => {
    const first = await request(app).get('/keys');
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    expect((await request(app).get('/').set('If-None-Match', etag)).status).toBe(304);
  });

  it.each(['post', 'put', 'delete', 'patch'] as const)('%s on a page answers 404 in the envelope', async (method) => {
    const res = await request(app)[method]('/keys');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: `no route for ${method.toUpperCase()} /keys`, code: 'not_found' });
  });
});

describe('security headers', () => {
  it.each(['/', '/assets/index-Ab12Cd.js', '/assets/missing.js', '/healthz'])('are on %s', async (path) => {
    const res = await request(app).get(path);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    expect(res.headers['x-frame-options']).toBe('DENY');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('probes', () => {
  it('/healthz and /readyz answer while the app is built', async () => {
    expect((await request(app).get('/healthz')).body).toEqual({ status: 'ok' });
    const ready = await request(app).get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok', checks: { web: 'ok' } });
  });

  it('/readyz is 503 and pages 503 in the envelope when index.html is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
    try {
      const unbuilt = buildApp(parseEnv(consoleEnvSchema, { CONSOLE_WEB_DIR: empty }), { logger });
      const ready = await request(unbuilt).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', checks: { web: 'down' } });
      const page = await request(unbuilt).get('/keys');
      expect(page.status).toBe(503);
      expect(page.body).toMatchObject({ success: false, code: 'service_unavailable' });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('environment', () => {
  it('defaults to port 3004 on loopback and the built app beside the sources', () => {
    expect(parseEnv(consoleEnvSchema, {})).toMatchObject({
      CONSOLE_PORT: 3004,
      HOST: '127.0.0.1',
      CONSOLE_WEB_DIR: join(__dirname, '../dist/web'),
    });
  });
});
