import request from 'supertest';
import { Agent, request as httpRequest } from 'undici';
import { metricValue } from '@modelgate/http';
import { createLogger } from '@modelgate/logger';
import { startEdge, useEdgeBetweenStandIns } from './support/edge';

const stack = useEdgeBetweenStandIns();

beforeEach(() => {
  stack.relay.received.length = 0;
  stack.account.received.length = 0;
  stack.console.received.length = 0;
});

describe('routing', () => {
  it.each([
    ['/v1/completions', 'relay'],
    ['/v1/models', 'relay'],
    ['/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIza-test', 'relay'],
    ['/v1/models/gemini-2.5-flash:generateContent', 'relay'],
    ['/api/user/self', 'account'],
    ['/api/log/self?p=2&page_size=5&type=2', 'account'],
    ['/api/stripe/webhook', 'account'],
    ['/', 'console'],
    ['/keys?p=2', 'console'],
    ['/assets/index-B1a2c3.js', 'console'],
  ])('%s reaches the %s service with path and query unchanged', async (path, serviceName) => {
    const res = await httpRequest(`${stack.edge.url}${path}`, { method: 'POST', body: '{}', dispatcher: stack.client });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ url: path, method: 'POST' });

    const services = { relay: stack.relay, account: stack.account, console: stack.console };
    for (const [name, service] of Object.entries(services)) {
      expect(service.received.map((r) => r.url)).toEqual(name === serviceName ? [path] : []);
    }
  });

  it('keeps the method and passes upstream status codes and headers back', async () => {
    stack.account.route('/api/token/7', (req, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json', 'Set-Cookie': 'session=abc; HttpOnly' });
      res.end(JSON.stringify({ success: false, message: 'not found', code: 'not_found', method: req.method }));
    });
    const res = await request(stack.edge.edge.app).delete('/api/token/7');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'not found', code: 'not_found', method: 'DELETE' });
    expect(res.headers['set-cookie']).toEqual(['session=abc; HttpOnly']);
  });

  it('sends look-alike prefixes and every other path to the console, not to the relay or the account service', async () => {
    const paths = ['/v1x', '/v2/completions', '/apix/user', '/V1/completions', '/healthzx', '/readyz/more', '/metrics', '/health'];
    for (const path of paths) {
      const res = await request(stack.edge.edge.app).get(path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ method: 'GET', url: path, bodyBytes: 0 });
    }
    expect(stack.console.received.map((r) => r.url)).toEqual(paths);
    expect(stack.relay.received).toHaveLength(0);
    expect(stack.account.received).toHaveLength(0);
  });

  it('answers its own probes, and other methods on them with a 404 envelope', async () => {
    expect((await request(stack.edge.edge.app).get('/readyz?full=1')).status).toBe(200);
    const res = await request(stack.edge.edge.app).post('/healthz');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'no route for POST /healthz', code: 'not_found' });
    expect(stack.console.received).toHaveLength(0);
  });

  it('answers /healthz itself', async () => {
    const res = await request(stack.edge.edge.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('exposes Prometheus metrics counting proxied responses on the metrics listener only', async () => {
    await httpRequest(`${stack.edge.url}/v1/models`, { dispatcher: stack.client }).then((r) => r.body.dump());
    const res = await request(stack.edge.edge.metricsApp).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    expect(res.text).toMatch(/edge_proxied_responses_total\{upstream="relay",status_class="2xx"\} [1-9]/);
    expect((await request(stack.edge.edge.metricsApp).get('/v1/models')).status).toBe(404);

    // On the public port /metrics is a console path like any other.
    const publicMetrics = await httpRequest(`${stack.edge.url}/metrics`, { dispatcher: stack.client });
    expect(await publicMetrics.body.json()).toEqual({ method: 'GET', url: '/metrics', bodyBytes: 0 });
    const exposition = (await request(stack.edge.edge.metricsApp).get('/metrics')).text;
    expect(exposition).toMatch(/edge_proxied_responses_total\{upstream="console",status_class="2xx"\} [1-9]/);
  });
});

describe('edge latency histogram', () => {
  const count = async (route: string, statusClass: string) =>
    metricValue(await stack.edge.edge.metrics.registry.metrics(), 'edge_request_duration_seconds_count', { route, status_class: statusClass }) ?? 0;

  it('times every request on the public port by route family and status class', async () => {
    stack.account.route('/api/token/9', (_req, res) => {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{}');
    });
    const cases: Array<[string, string, string]> = [
      ['/v1/models', 'v1', '2xx'],
      ['/v1beta/models', 'v1beta', '2xx'],
      ['/api/token/9', 'api', '4xx'],
      ['/healthz', 'other', '2xx'],
      ['/nothing-here', 'console', '2xx'],
    ];
    const before = await Promise.all(cases.map(([, route, statusClass]) => count(route, statusClass)));
    for (const [path] of cases) await httpRequest(`${stack.edge.url}${path}`, { dispatcher: stack.client }).then((r) => r.body.dump());
    const after = await Promise.all(cases.map(([, route, statusClass]) => count(route, statusClass)));
    expect(after.map((value, i) => value - (before[i] ?? Number.NaN))).toEqual([1, 1, 1, 1, 1]);

    const exposition = (await request(stack.edge.edge.metricsApp).get('/metrics')).text;
    expect(exposition).toMatch(/^edge_request_duration_seconds_bucket\{le="0\.25",route="v1beta",status_class="2xx"\} [1-9]/m);
  });
});

describe('request ids', () => {
  it('generates one when absent and shows the same id to the service and the client', async () => {
    const res = await httpRequest(`${stack.edge.url}/v1/models`, { dispatcher: stack.client });
    await res.body.dump();
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(stack.relay.received[0]?.headers['x-request-id']).toBe(id);
  });

  it('passes a well-formed incoming id through', async () => {
    const res = await httpRequest(`${stack.edge.url}/api/status`, {
      headers: { 'X-Request-Id': 'client-trace.42:a' },
      dispatcher: stack.client,
    });
    await res.body.dump();
    expect(res.headers['x-request-id']).toBe('client-trace.42:a');
    expect(stack.account.received[0]?.headers['x-request-id']).toBe('client-trace.42:a');
  });

  it('replaces a malformed incoming id', async () => {
    const res = await httpRequest(`${stack.edge.url}/api/status`, {
      headers: { 'X-Request-Id': 'bad id with spaces <script>' },
      dispatcher: stack.client,
    });
    await res.body.dump();
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(stack.account.received[0]?.headers['x-request-id']).toBe(id);
  });

  it('overrides a different id set by the service, so the client sees the one that was logged', async () => {
    stack.relay.route('/v1/models', (_req, res) => {
      res.writeHead(200, { 'X-Request-Id': 'something-else', 'Content-Type': 'application/json' }).end('{}');
    });
    const res = await httpRequest(`${stack.edge.url}/v1/models`, { headers: { 'x-request-id': 'abc-1' }, dispatcher: stack.client });
    await res.body.dump();
    expect(res.headers['x-request-id']).toBe('abc-1');
  });

  it('is on edge-made responses too (404)', async () => {
    const res = await request(stack.edge.edge.app).post('/readyz').set('X-Request-Id', 'trace-404');
    expect(res.status).toBe(404);
    expect(res.headers['x-request-id']).toBe('trace-404');
  });
});

describe('client address', () => {
  it('sends the connecting address in X-Forwarded-For, ignoring what the client claims', async () => {
    const res = await httpRequest(`${stack.edge.url}/v1/models`, {
      headers: { 'X-Forwarded-For': '203.0.113.9', 'X-Forwarded-Proto': 'https' },
      dispatcher: stack.client,
    });
    await res.body.dump();
    const headers = stack.relay.received[0]?.headers;
    expect(headers?.['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers?.['x-forwarded-proto']).toBe('http');
  });

  it('believes X-Forwarded-* only from a trusted proxy in front, as the TCP peer', async () => {
    const behindProxy = await startEdge({ RELAY_URL: stack.relay.url, ACCOUNT_URL: stack.account.url, TRUSTED_PROXIES: '127.0.0.2' });
    const fromProxy = new Agent({ localAddress: '127.0.0.2' });
    // A client spoofed the first entry; the trusted proxy appended the address it saw.
    const headers = { 'X-Forwarded-For': '10.9.9.9, 198.51.100.7', 'X-Forwarded-Proto': 'https' };
    try {
      await (await httpRequest(`${behindProxy.url}/v1/models`, { headers, dispatcher: fromProxy })).body.dump();
      await (await httpRequest(`${behindProxy.url}/v1/models`, { headers, dispatcher: stack.client })).body.dump();
      expect(stack.relay.received.map((r) => [r.headers['x-forwarded-for'], r.headers['x-forwarded-proto']])).toEqual([
        ['198.51.100.7', 'https'],
        // 127.0.0.1 is not in TRUSTED_PROXIES: a client like any other.
        ['127.0.0.1', 'http'],
      ]);
    } finally {
      await fromProxy.close();
      await behindProxy.stop();
    }
  });
});

describe('access log', () => {
  it('at debug level, writes one line per proxied request with secrets in the query redacted', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      service: 'edge',
      level: 'debug',
      destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const debugEdge = await startEdge({ RELAY_URL: stack.relay.url, ACCOUNT_URL: stack.account.url }, logger);
    try {
      const res = await httpRequest(`${debugEdge.url}/v1beta/models?key=AIza-SECRET`, { dispatcher: stack.client });
      await res.body.dump();
      await new Promise((resolve) => setImmediate(resolve));
      const access = lines.filter((line) => line.msg === 'request');
      expect(access).toEqual([
        expect.objectContaining({ method: 'GET', path: '/v1beta/models?key=[Redacted]', status: 200, requestId: res.headers['x-request-id'] }),
      ]);
      expect(JSON.stringify(lines)).not.toContain('AIza-SECRET');
    } finally {
      await debugEdge.stop();
    }
  });
});
