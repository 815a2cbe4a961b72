// Traffic full of known secrets through the relay, with every log line kept at level
// trace: no line may contain one, and the lines about a call say which request, user and channel.
import { createLogger } from '@modelgate/logger';
import { createChannel } from '@modelgate/testing';
import { createCustomer, harness, MODEL, openAiChannel, relaySuite, setUnitPrices, upstream } from './harness';

const GEMINI_MODEL = 'gemini-2.5-flash';
const OPENAI_CHANNEL_KEY = 'sk-openai-channel-SECRET-7f3a9c1e';
const GEMINI_CHANNEL_KEY = 'AIzaGeminiChannelSECRET0123456789abcd';
const SESSION_COOKIE = 'session=relay-cookie-SECRET-44b1';
const WRONG_KEY = `sk-${'W'.repeat(40)}SECRET00`;

const logLines: string[] = [];
relaySuite({}, {
  logger: createLogger({ service: 'relay', level: 'trace', destination: { write: (line: string) => logLines.push(line) } }),
});

type Line = Record<string, unknown>;

function post(path: string, body: unknown, headers: Record<string, string>) {
  return fetch(`${harness.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: SESSION_COOKIE, ...headers },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, requestId: res.headers.get('x-request-id')!, text: await res.text() }));
}

it('logs no key, channel key or cookie, and ties every per-call line to its request, user and channel', async () => {
  await harness.reset();
  await setUnitPrices(harness.prisma, [MODEL, GEMINI_MODEL]);
  const openai = await openAiChannel(harness.prisma, upstream.url, { key: OPENAI_CHANNEL_KEY, autoBan: false });
  const gemini = await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, models: GEMINI_MODEL, key: GEMINI_CHANNEL_KEY, autoBan: false });
  await harness.reloadCaches();
  const customer = await createCustomer(harness.prisma);
  const bare = customer.key.slice(3);
  const completion = { model: MODEL, prompt: 'hi', max_tokens: 2 };
  const contents = { contents: [{ parts: [{ text: 'hi' }] }] };
  const bearer = { authorization: `Bearer ${customer.key}` };

  const calls = [
    await post('/v1/completions', completion, bearer),
    await post('/v1/completions', { ...completion, stream: true }, bearer),
    await post('/v1/completions', completion, { authorization: `Bearer ${WRONG_KEY}` }),
    await post(`/v1beta/models/${GEMINI_MODEL}:generateContent`, contents, { 'x-goog-api-key': bare }),
    await post(`/v1beta/models/${GEMINI_MODEL}:generateContent?key=${bare}`, contents, {}),
    await post(`/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse&key=${bare}`, contents, {}),
    await post(`/v1beta/models/${GEMINI_MODEL}:generateContent?key=${WRONG_KEY.slice(3)}`, contents, {}),
  ] as const;
  expect(calls.map((call) => call.status)).toEqual([200, 200, 401, 200, 200, 200, 401]);

  // Upstream failures: answers that echo the channel key, a reset connection, a malformed body.
  const openAiFailures = [
    await post('/v1/completions', { ...completion, fake_mode: 'error401' }, bearer),
    await post('/v1/completions', { ...completion, fake_mode: 'error400' }, bearer),
    await post('/v1/completions', { ...completion, fake_mode: 'reset' }, bearer),
  ] as const;
  upstream.setMode('error400');
  const geminiFailure = await post(`/v1beta/models/${GEMINI_MODEL}:generateContent`, contents, { 'x-goog-api-key': bare });
  upstream.setMode('ok');
  const failures = [...openAiFailures, geminiFailure] as const;
  expect(failures.map((call) => call.status)).toEqual([401, 400, 502, 400]);
  for (const failure of failures) {
    expect(failure.text).not.toContain(OPENAI_CHANNEL_KEY);
    expect(failure.text).not.toContain(GEMINI_CHANNEL_KEY);
  }
  await harness.relay.ledger.flush();

  const text = logLines.join('');
  for (const secret of [customer.key, bare, WRONG_KEY, WRONG_KEY.slice(3), OPENAI_CHANNEL_KEY, GEMINI_CHANNEL_KEY, SESSION_COOKIE, 'relay-cookie-SECRET']) {
    expect({ secret, logged: text.includes(secret) }).toEqual({ secret, logged: false });
  }

  const lines = logLines.map((line) => JSON.parse(line) as Line);
  expect(lines.every((line) => line.service === 'relay')).toBe(true);
  // One access line per request (debug level), with its latency and, once the key is known, its user.
  const access = lines.filter((line) => line.msg === 'request');
  expect(access.map((line) => line.requestId).sort()).toEqual([...calls, ...failures].map((call) => call.requestId).sort());
  const served = access.find((line) => line.requestId === calls[0].requestId)!;
  expect(served).toMatchObject({ level: 'info', userId: customer.userId, channelId: openai.id, status: 200, method: 'POST' });
  expect(served.latencyMs).toEqual(expect.any(Number));
  expect(access.find((line) => line.requestId === calls[1].requestId)).toMatchObject({ userId: customer.userId, channelId: openai.id });
  expect(access.find((line) => line.requestId === calls[4].requestId)).toMatchObject({
    userId: customer.userId,
    channelId: gemini.id,
    path: `/v1beta/models/${GEMINI_MODEL}:generateContent?key=[Redacted]`,
  });

  const upstreamLines = lines.filter((line) => line.msg === 'upstream answered with an error' || line.msg === 'upstream attempt failed');
  expect(upstreamLines.map((line) => [line.requestId, line.channelId, line.userId])).toEqual([
    [failures[0].requestId, openai.id, customer.userId],
    [failures[1].requestId, openai.id, customer.userId],
    [failures[2].requestId, openai.id, customer.userId],
    [failures[3].requestId, gemini.id, customer.userId],
  ]);
  // The 502 after the reset: its error line says whose call failed, without a stack.
  expect(lines.find((line) => line.msg === 'request failed')).toMatchObject({
    level: 'error',
    requestId: failures[2].requestId,
    userId: customer.userId,
    code: 'upstream_error',
  });
  expect(text).not.toMatch(/\n\s+at \S+ \(/);
});
