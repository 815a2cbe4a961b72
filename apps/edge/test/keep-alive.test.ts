import { Agent, request as httpRequest } from 'undici';
import { startEdge, type RunningEdge } from './support/edge';
import { startStandIn, type StandInService } from './support/stand-in-service';

describe('keep-alive', () => {
  let relay: StandInService;
  let account: StandInService;
  let edge: RunningEdge;
  beforeAll(async () => {
    relay = await startStandIn();
    account = await startStandIn();
    edge = await startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: account.url });
  });
  afterAll(async () => {
    await edge.stop();
    await relay.stop();
    await account.stop();
  });

  it('sequential requests reuse one connection to the service, whatever the clients do', async () => {
    const before = relay.connections;
    for (let i = 0; i < 10; i += 1) {
      // A fresh client connection each time: pooling to the service must not depend on the client.
      const client = new Agent();
      const res = await httpRequest(`${edge.url}/v1/completions`, { method: 'POST', body: `{"n":${i}}`, dispatcher: client });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      await client.close();
    }
    expect(relay.connections - before).toBe(1);
  });

  it('a client connection is kept alive too', async () => {
    const client = new Agent({ connections: 1 });
    let clientConnections = 0;
    client.on('connect', () => {
      clientConnections += 1;
    });
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await httpRequest(`${edge.url}/api/status`, { dispatcher: client });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
      }
      expect(clientConnections).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('concurrent requests open no more connections than were in use at once', async () => {
    const client = new Agent({ connections: 8 });
    try {
      const before = account.connections;
      const burst = async () => {
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            const res = await httpRequest(`${edge.url}/api/status`, { dispatcher: client });
            await res.body.dump();
          }),
        );
      };
      await burst();
      await burst();
      await burst();
      // 24 requests, at most 8 at a time: never more service connections than were in use at once.
      expect(account.connections - before).toBeGreaterThan(0);
      expect(account.connections - before).toBeLessThanOrEqual(8);
    } finally {
      await client.close();
    }
  });
});
