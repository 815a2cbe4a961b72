// Per-address rate limits against a forged X-Forwarded-For: only a trusted proxy (the edge) names the client.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '@modelgate/http';
import { Agent, request } from 'undici';
import { createTestAccount } from './support/app';

// The edge is 127.0.0.2 here, so a caller on 127.0.0.1 is a client that reached the service directly.
const account = createTestAccount({ TRUSTED_PROXIES: '127.0.0.2' });
const direct = new Agent();
const fromEdge = new Agent({ localAddress: '127.0.0.2' });
let server: Server;
let url: string;

beforeAll(async () => {
  server = await listen(account.app, 0, '127.0.0.1');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => account.reset());
afterAll(async () => {
  await direct.close();
  await fromEdge.close();
  await new Promise((resolve) => server.close(resolve));
  await account.close();
});

async function register(username: string, forwardedFor: string, dispatcher: Agent): Promise<number> {
  const res = await request(`${url}/api/user/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify({ username, password: 'pa55word!' }),
    dispatcher,
  });
  await res.body.dump();
  return res.statusCode;
}

describe('per-address registration limit (10 an hour)', () => {
  it('counts a direct caller by its own address, whatever X-Forwarded-For it sends', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await register(`direct_${i}`, `198.51.100.${i}`, direct));
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
  });

  it('counts each client the trusted proxy forwards separately', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await register(`proxied_${i}`, '203.0.113.7', fromEdge));
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    expect(await register('another_client', '203.0.113.8', fromEdge)).toBe(200);
  });
});
