// The edge's readiness no longer depends on the relay or the account service (an outage
// of either took every edge out of the load balancer, model traffic included); they, and the
// console, are reported in the detailed view, which only the private listener serves.
import request from 'supertest';
import { startEdge, type RunningEdge } from './support/edge';
import { freePort, startStandIn, type StandInService } from './support/stand-in-service';

let relay: StandInService;
let account: StandInService;
let consoleServer: StandInService;
beforeAll(async () => {
  relay = await startStandIn();
  account = await startStandIn();
  consoleServer = await startStandIn();
});
afterAll(async () => {
  await relay.stop();
  await account.stop();
  await consoleServer.stop();
});

async function withEdge(relayUrl: string, accountUrl: string, run: (edge: RunningEdge) => Promise<void>) {
  const edge = await startEdge({ RELAY_URL: relayUrl, ACCOUNT_URL: accountUrl, CONSOLE_URL: consoleServer.url });
  try {
    await run(edge);
  } finally {
    await edge.stop();
  }
}

describe('GET /readyz (public)', () => {
  it('is 200 with the account service down, and model traffic still flows while /api answers 502 in its envelope', async () => {
    await withEdge(relay.url, `http://127.0.0.1:${await freePort()}`, async (edge) => {
      const ready = await request(edge.edge.app).get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ok', checks: {} });
      expect((await request(edge.edge.app).post('/v1/completions').send({ model: 'm' })).status).toBe(200);
      const api = await request(edge.edge.app).get('/api/status');
      expect(api.status).toBe(502);
      expect(api.body).toMatchObject({ success: false, code: 'bad_gateway' });
    });
  });

  it('is 200 with the relay down too, and asks no service', async () => {
    const port = await freePort();
    const before = relay.received.length + account.received.length + consoleServer.received.length;
    await withEdge(`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}`, async (edge) => {
      expect((await request(edge.edge.app).get('/readyz')).status).toBe(200);
      const completion = await request(edge.edge.app).post('/v1/completions').send({ model: 'm' });
      expect(completion.status).toBe(502);
      expect(completion.body.error).toMatchObject({ type: 'upstream_error' });
      expect((await request(edge.edge.app).get('/healthz')).status).toBe(200);
    });
    expect(relay.received.length + account.received.length + consoleServer.received.length).toBe(before);
  });

  it('serves no detailed view on the public port: /health there is a console path', async () => {
    await withEdge(relay.url, account.url, async (edge) => {
      expect((await request(edge.edge.app).get('/health')).body).toEqual({ method: 'GET', url: '/health', bodyBytes: 0 });
    });
  });
});

describe('GET /health (private listener)', () => {
  it("reports each service's readiness with its latency, and no address", async () => {
    await withEdge(relay.url, account.url, async (edge) => {
      const res = await request(edge.edge.metricsApp).get('/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        status: 'ok',
        checks: {
          relay: { status: 'ok', required: false, latency_ms: expect.any(Number) },
          account: { status: 'ok', required: false, latency_ms: expect.any(Number) },
          console: { status: 'ok', required: false, latency_ms: expect.any(Number) },
        },
      });
      expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|http:|localhost/);
    });
    expect(relay.received.some((r) => r.url === '/readyz')).toBe(true);
    expect(account.received.some((r) => r.url === '/readyz')).toBe(true);
    expect(consoleServer.received.some((r) => r.url === '/readyz')).toBe(true);
  });

  it('says degraded, still 200, when a service is down or not ready', async () => {
    const unready = await startStandIn();
    unready.route('/readyz', (_req, res) => {
      res.writeHead(503).end();
    });
    try {
      await withEdge(unready.url, `http://127.0.0.1:${await freePort()}`, async (edge) => {
        const res = await request(edge.edge.metricsApp).get('/health');
        expect(res.status).toBe(200);
        expect(res.body.status).toBe('degraded');
        expect(res.body.checks.relay.status).toBe('down');
        expect(res.body.checks.account.status).toBe('down');
      });
    } finally {
      await unready.stop();
    }
  });

  it('reports a hung service down within the deadline', async () => {
    const hung = await startStandIn();
    hung.rawRoute('/readyz', () => {});
    try {
      await withEdge(relay.url, hung.url, async (edge) => {
        const started = Date.now();
        const res = await request(edge.edge.metricsApp).get('/health');
        expect(res.body.checks).toMatchObject({ relay: { status: 'ok' }, account: { status: 'down' } });
        expect(res.body.checks.account.latency_ms).toBeGreaterThanOrEqual(900);
        expect(Date.now() - started).toBeLessThan(5000);
      });
    } finally {
      await hung.stop();
    }
  });
});
