// A key's IP allow-list against a forged X-Forwarded-For: only a trusted proxy (the edge) names the client.
import { Agent, request } from 'undici';
import { createCustomer, harness, MODEL, relaySuite, resetSuite, withOpenAiChannel } from './harness';

// The edge is 127.0.0.2 here, so a caller on 127.0.0.1 is a client that reached the relay directly.
relaySuite({ TRUSTED_PROXIES: '127.0.0.2' });

const direct = new Agent();
const fromEdge = new Agent({ localAddress: '127.0.0.2' });

beforeEach(async () => {
  await resetSuite();
  await withOpenAiChannel();
});

afterAll(async () => {
  await direct.close();
  await fromEdge.close();
});

async function call(path: string, key: string, dispatcher: Agent): Promise<{ status: number; code?: string }> {
  const completion = path === '/v1/completions';
  const res = await request(`${harness.url}${path}`, {
    method: completion ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-forwarded-for': '10.1.2.3' },
    body: completion ? JSON.stringify({ model: MODEL, prompt: 'hi', max_tokens: 5 }) : undefined,
    dispatcher,
  });
  const body = (await res.body.json()) as { error?: { code?: string } };
  return { status: res.statusCode, code: body.error?.code };
}

describe.each(['/v1/completions', '/v1/models'])('%s with a key limited to 10.1.2.3', (path) => {
  it('refuses X-Forwarded-For: 10.1.2.3 from a peer that is not a trusted proxy (403 ip_not_allowed)', async () => {
    const { key } = await createCustomer(harness.prisma, { allowIps: '10.1.2.3' });
    expect(await call(path, key, direct)).toEqual({ status: 403, code: 'ip_not_allowed' });
  });

  it('accepts the same header from a trusted proxy', async () => {
    const { key } = await createCustomer(harness.prisma, { allowIps: '10.1.2.3' });
    expect(await call(path, key, fromEdge)).toEqual({ status: 200, code: undefined });
  });
});
