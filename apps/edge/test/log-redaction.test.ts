// Credentials through the edge (headers, cookies, query values, Stripe signatures), with
// every log line kept at level trace (access lines included): none may appear in a line.
import { createLogger } from '@modelgate/logger';
import { request as httpRequest } from 'undici';
import { startEdge } from './support/edge';
import { freePort, startStandIn } from './support/stand-in-service';

it('logs no credential, and every access and failure line carries the request id', async () => {
  const lines: string[] = [];
  const logger = createLogger({ service: 'edge', level: 'trace', destination: { write: (line: string) => lines.push(line) } });
  const relay = await startStandIn();
  // The stand-in answers as the console too.
  const edge = await startEdge({ RELAY_URL: relay.url, ACCOUNT_URL: `http://127.0.0.1:${await freePort()}`, CONSOLE_URL: relay.url }, logger);
  const secrets = {
    bearer: 'sk-edge-bearer-SECRET-0c4f',
    goog: 'AIza-edge-goog-SECRET-77aa',
    queryKey: 'edge-query-key-SECRET-12',
    accessToken: 'edge-access-token-SECRET-9d',
    cookie: 'edge-session-SECRET-5e3b',
    signature: 'edge-stripe-signature-SECRET-aa0',
  };
  try {
    const sent = [
      await httpRequest(`${edge.url}/v1/completions`, { method: 'POST', body: '{}', headers: { authorization: `Bearer ${secrets.bearer}` } }),
      await httpRequest(`${edge.url}/v1beta/models/m:generateContent?key=${secrets.queryKey}`, { method: 'POST', body: '{}', headers: { 'x-goog-api-key': secrets.goog } }),
      // The account service is down: the edge answers 502 itself and logs the failure.
      await httpRequest(`${edge.url}/api/user/self?access_token=${secrets.accessToken}`, { headers: { cookie: `session=${secrets.cookie}` } }),
      await httpRequest(`${edge.url}/api/stripe/webhook`, { method: 'POST', body: '{}', headers: { 'stripe-signature': `t=1,v1=${secrets.signature}` } }),
      await httpRequest(`${edge.url}/keys?key=${secrets.queryKey}`),
      // Answered by the edge itself.
      await httpRequest(`${edge.url}/readyz?key=${secrets.queryKey}`, { method: 'POST', body: '{}' }),
    ] as const;
    for (const res of sent) await res.body.dump();
    expect(sent.map((res) => res.statusCode)).toEqual([200, 200, 502, 502, 200, 404]);

    const text = lines.join('');
    for (const [name, secret] of Object.entries(secrets)) expect({ name, logged: text.includes(secret) }).toEqual({ name, logged: false });
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const access = parsed.filter((line) => line.msg === 'request');
    expect(access.map((line) => line.requestId).sort()).toEqual(sent.map((res) => res.headers['x-request-id']).sort());
    for (const line of access) expect(line).toMatchObject({ service: 'edge', latencyMs: expect.any(Number) });
    expect(access.map((line) => line.path)).toContain('/v1beta/models/m:generateContent?key=[Redacted]');
    const failures = parsed.filter((line) => line.msg === 'upstream request failed');
    expect(failures.map((line) => line.requestId).sort()).toEqual([sent[2], sent[3]].map((res) => res.headers['x-request-id']).sort());
  } finally {
    await edge.stop();
    await relay.stop();
  }
});
