import { request as httpRequest } from 'undici';
import { startEdge, useEdgeBetweenStandIns, type RunningEdge } from './support/edge';

const APP = 'https://app.example.com';
const CONSOLE = 'https://console.example.com';
/** What the OpenAI, Anthropic and Google browser SDKs ask for in their preflights. */
const SDK_HEADERS = [
  'authorization',
  'content-type',
  'x-stainless-os',
  'x-stainless-retry-count',
  'openai-organization',
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
  'anthropic-dangerous-direct-browser-access',
  'x-goog-api-key',
  'x-goog-api-client',
].join(',');

const stack = useEdgeBetweenStandIns();
beforeEach(() => {
  stack.relay.received.length = 0;
  stack.account.received.length = 0;
});

function preflight(edge: RunningEdge, path: string, origin: string, requestHeaders = SDK_HEADERS) {
  return httpRequest(`${edge.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': requestHeaders },
    dispatcher: stack.client,
  });
}

describe('CORS with the default CORS_ORIGINS=*', () => {

  it.each(['/v1/chat/completions', '/v1/messages?beta=true', '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'])(
    '%s: a browser preflight is answered 204 by the edge with what the SDKs ask for',
    async (path) => {
      const res = await preflight(stack.edge, path, APP, `${SDK_HEADERS},x-unknown-header`);
      await res.body.dump();
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toBe('GET, POST, OPTIONS');
      expect(res.headers['access-control-allow-headers']).toBe(SDK_HEADERS.split(',').join(', '));
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['access-control-max-age']).toBe('86400');
      expect(res.headers['x-request-id']).toBeTruthy();
      expect(stack.relay.received).toHaveLength(0);
    },
  );

  it('lets a browser read /v1 answers, streams included, and X-Request-Id', async () => {
    stack.relay.rawRoute('/v1/completions', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
      setTimeout(() => res.end('data: [DONE]\n\n'), 300);
    });
    const started = Date.now();
    const res = await httpRequest(`${stack.edge.url}/v1/completions`, { method: 'POST', headers: { origin: APP }, body: '{}', dispatcher: stack.client });
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['access-control-expose-headers']).toBe('X-Request-Id, Retry-After');
    const chunks: Array<{ at: number; text: string }> = [];
    for await (const chunk of res.body) chunks.push({ at: Date.now() - started, text: String(chunk) });
    expect(chunks[0]).toMatchObject({ text: 'data: {"n":1}\n\n' });
    expect(chunks[0]?.at).toBeLessThan(250);
  });

  it('adds nothing to calls without an Origin (SDKs on servers)', async () => {
    const res = await httpRequest(`${stack.edge.url}/v1/models`, { dispatcher: stack.client });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('does not open /api to other origins: no allow headers, no credentials', async () => {
    const pre = await preflight(stack.edge, '/api/user/self', APP, 'content-type,new-api-user');
    await pre.body.dump();
    expect(pre.statusCode).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    const res = await httpRequest(`${stack.edge.url}/api/user/self`, { headers: { origin: APP }, dispatcher: stack.client });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers.vary).toBe('Origin');
  });

  it('passes an OPTIONS request that is not a preflight to the service', async () => {
    const res = await httpRequest(`${stack.edge.url}/v1/models`, { method: 'OPTIONS', headers: { origin: APP }, dispatcher: stack.client });
    await res.body.dump();
    expect(stack.relay.received.map((r) => r.method)).toEqual(['OPTIONS']);
  });
});

describe('CORS with CORS_ORIGINS naming the console', () => {
  let edge: RunningEdge;
  beforeAll(async () => {
    edge = await startEdge({ RELAY_URL: stack.relay.url, ACCOUNT_URL: stack.account.url, CORS_ORIGINS: CONSOLE, MAX_REQUEST_BODY_MB: '1' });
  });
  afterAll(() => edge.stop());

  it('allows /api with credentials from the named origin only', async () => {
    const pre = await preflight(edge, '/api/user/self', CONSOLE, 'Content-Type, New-Api-User');
    await pre.body.dump();
    expect(pre.statusCode).toBe(204);
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': CONSOLE,
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': 'GET, POST, PUT, DELETE, OPTIONS',
      'access-control-allow-headers': 'content-type, new-api-user',
      vary: 'Origin, Access-Control-Request-Headers',
    });
    const res = await httpRequest(`${edge.url}/api/user/self`, { headers: { origin: CONSOLE, cookie: 'session=abc' }, dispatcher: stack.client });
    await res.body.dump();
    expect(res.headers).toMatchObject({ 'access-control-allow-origin': CONSOLE, 'access-control-allow-credentials': 'true', vary: 'Origin' });

    const other = await httpRequest(`${edge.url}/api/user/self`, { headers: { origin: APP }, dispatcher: stack.client });
    await other.body.dump();
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers /v1 for the named origin only, never with credentials', async () => {
    const named = await httpRequest(`${edge.url}/v1/models`, { headers: { origin: CONSOLE }, dispatcher: stack.client });
    await named.body.dump();
    expect(named.headers['access-control-allow-origin']).toBe(CONSOLE);
    expect(named.headers['access-control-allow-credentials']).toBeUndefined();
    const other = await preflight(edge, '/v1/chat/completions', APP);
    await other.body.dump();
    expect(other.statusCode).toBe(204);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('keeps the 413 answer readable cross-origin', async () => {
    const res = await httpRequest(`${edge.url}/v1/completions`, {
      method: 'POST',
      headers: { origin: CONSOLE },
      body: Buffer.alloc(2 * 1024 * 1024),
      dispatcher: stack.client,
    });
    expect(res.statusCode).toBe(413);
    expect(res.headers['access-control-allow-origin']).toBe(CONSOLE);
    await res.body.dump();
  });
});
