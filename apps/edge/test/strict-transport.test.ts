// HSTS (docs/api.md 3.7): behind an https public address every answer of the public port tells
// browsers to use https only; behind an http one (a local install) none does.
import { Agent, request } from 'undici';
import { startEdge, type RunningEdge } from './support/edge';
import { startStandIn, type StandInService } from './support/stand-in-service';

const HSTS = 'max-age=31536000; includeSubDomains';

let relay: StandInService;
let account: StandInService;
let consoleService: StandInService;
let client: Agent;

beforeAll(async () => {
  relay = await startStandIn();
  account = await startStandIn();
  consoleService = await startStandIn();
  client = new Agent();
});
afterAll(async () => {
  await client.close();
  await relay.stop();
  await account.stop();
  await consoleService.stop();
});

function edgeWith(env: Record<string, string>) {
  return startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: account.url, CONSOLE_URL: consoleService.url, MAX_REQUEST_BODY_MB: '1', ...env });
}

/** Answers of every kind: proxied to each service, a preflight, the edge's own error and probe. */
async function strictTransportHeaders(edge: RunningEdge): Promise<Record<string, unknown>> {
  const calls: Record<string, Parameters<typeof request>[1]> = {
    'POST /v1/chat/completions': { method: 'POST', body: '{}' },
    'GET /api/status': { method: 'GET' },
    'GET /wallet': { method: 'GET' },
    'OPTIONS /v1/chat/completions': { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } },
    'POST /v1/completions (413)': { method: 'POST', headers: { 'content-length': String(2 * 1024 * 1024) }, body: Buffer.alloc(2 * 1024 * 1024) },
    'GET /healthz': { method: 'GET' },
  };
  const seen: Record<string, unknown> = {};
  for (const [name, options] of Object.entries(calls)) {
    const path = name.split(' ')[1] ?? '/';
    const res = await request(`${edge.url}${path}`, { ...options, dispatcher: client });
    await res.body.dump();
    seen[name] = res.headers['strict-transport-security'];
  }
  return seen;
}

it('sends Strict-Transport-Security on every answer when PUBLIC_URL is https', async () => {
  const edge = await edgeWith({ PUBLIC_URL: 'https://gateway.example.com' });
  try {
    const seen = await strictTransportHeaders(edge);
    expect(Object.values(seen)).toHaveLength(6);
    for (const [name, value] of Object.entries(seen)) expect({ name, value }).toEqual({ name, value: HSTS });
  } finally {
    await edge.stop();
  }
});

it('sends none when the public address is http (the default: the local edge)', async () => {
  for (const env of [{}, { PUBLIC_URL: 'http://gateway.internal:8080' }] as Record<string, string>[]) {
    const edge = await edgeWith(env);
    try {
      expect(Object.values(await strictTransportHeaders(edge)).every((value) => value === undefined)).toBe(true);
    } finally {
      await edge.stop();
    }
  }
});
