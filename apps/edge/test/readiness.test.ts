import request from 'supertest';
import { startEdge, type RunningEdge } from './support/edge';
import { freePort, startStandIn, type StandInService } from './support/stand-in-service';

describe('GET /readyz', () => {
  let relay: StandInService;
  let account: StandInService;
  beforeAll(async () => {
    relay = await startStandIn();
    account = await startStandIn();
  });
  afterAll(async () => {
    await relay.stop();
    await account.stop();
  });

  async function withEdge(relayUrl: string, accountUrl: string, run: (edge: RunningEdge) => Promise<void>) {
    const edge = await startEdge({ RELAY_URL: relayUrl, ACCOUNT_URL: accountUrl });
    try {
      await run(edge);
    } finally {
      await edge.stop();
    }
  }

  it('is 200 when the relay and the account service answer their /healthz', async () => {
    await withEdge(relay.url, account.url, async (edge) => {
      const res = await request(edge.edge.app).get('/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok', checks: { relay: 'ok', account: 'ok' } });
    });
    expect(relay.received.some((r) => r.url === '/healthz')).toBe(true);
    expect(account.received.some((r) => r.url === '/healthz')).toBe(true);
  });

  it('is 503 naming the service that is down', async () => {
    await withEdge(relay.url, `http://127.0.0.1:${await freePort()}`, async (edge) => {
      const res = await request(edge.edge.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'unavailable', checks: { relay: 'ok', account: 'down' } });
    });
  });

  it('is 503 when a service answers /healthz with an error', async () => {
    const sick = await startStandIn();
    sick.route('/healthz', (_req, res) => {
      res.writeHead(500).end();
    });
    try {
      await withEdge(sick.url, account.url, async (edge) => {
        const res = await request(edge.edge.app).get('/readyz');
        expect(res.status).toBe(503);
        expect(res.body.checks).toEqual({ relay: 'down', account: 'ok' });
      });
    } finally {
      await sick.stop();
    }
  });

  it('is 503 within the deadline when a service hangs', async () => {
    const hung = await startStandIn();
    hung.rawRoute('/healthz', () => {});
    try {
      await withEdge(relay.url, hung.url, async (edge) => {
        const started = Date.now();
        const res = await request(edge.edge.app).get('/readyz');
        expect(res.status).toBe(503);
        expect(res.body.checks).toEqual({ relay: 'ok', account: 'down' });
        expect(Date.now() - started).toBeLessThan(5000);
      });
    } finally {
      await hung.stop();
    }
  });

  it('/healthz stays 200 even with both services down', async () => {
    const port = await freePort();
    await withEdge(`http://127.0.0.1:${port}`, `http://127.0.0.1:${port}`, async (edge) => {
      const res = await request(edge.edge.app).get('/healthz');
      expect(res.status).toBe(200);
    });
  });
});
