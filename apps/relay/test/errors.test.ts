// docs/api.md 1.3: every row of the relay error table, in the OpenAI and Google dialects, in check order.
import { UNREAD_BODY_DRAIN } from '@modelgate/http';
import { createChannel } from '@modelgate/testing';
import { uploadDeclaredBody, uploadEndlessBody } from '@modelgate/testing/uploads';
import OpenAI from 'openai';
import { consumeLogs, createCustomer, eventually, harness, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, setUnitPrices, startRelay, upstream } from './harness';

relaySuite({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '300', UPSTREAM_IDLE_TIMEOUT_MS: '300', MAX_REQUEST_BODY_MB: '1' });

beforeEach(async () => {
  await resetSuite({ chunks: 5 });
  await setUnitPrices(harness.prisma, [MODEL, 'gemini-2.5-flash']);
  await openAiChannel(harness.prisma, upstream.url);
  await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, models: 'gemini-2.5-flash', key: 'gemini-channel-key' });
  await harness.reloadCaches();
});

interface Answer {
  status: number;
  body: { error: { message: string; type?: string; param?: string | null; code: string | number; status?: string } };
}

async function complete(key: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${harness.url}/v1/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-request-id': 'req-table-1',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

async function generate(key: string | undefined, body: unknown, model = 'gemini-2.5-flash'): Promise<Answer> {
  const response = await fetch(`${harness.url}/v1beta/models/${model}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-goog-api-key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

function expectOpenAIError(answer: Answer, status: number, type: string, code: string, param: string | null = null) {
  expect(answer.status).toBe(status);
  expect(answer.body.error).toEqual({ message: expect.stringMatching(/ \(request id: req-table-1\)$/), type, param, code });
}

const valid = { model: MODEL, prompt: [1, 2, 3], max_tokens: 5 };
const gemini = { contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] };

describe('relay error table (OpenAI dialect)', () => {
  it('401 invalid_api_key for a missing, unknown, disabled, expired or exhausted key', async () => {
    expectOpenAIError(await complete(undefined, valid), 401, 'invalid_request_error', 'invalid_api_key');
    expectOpenAIError(await complete(`sk-${'x'.repeat(48)}`, valid), 401, 'invalid_request_error', 'invalid_api_key');
    expectOpenAIError(await complete('not-a-key', valid), 401, 'invalid_request_error', 'invalid_api_key');
    const disabled = await createCustomer(harness.prisma, { status: 2 });
    expectOpenAIError(await complete(disabled.key, valid), 401, 'invalid_request_error', 'invalid_api_key');
    const expired = await createCustomer(harness.prisma, { expiresAt: new Date(Date.now() - 1000) });
    expectOpenAIError(await complete(expired.key, valid), 401, 'invalid_request_error', 'invalid_api_key');
    const exhausted = await createCustomer(harness.prisma, { remainQuota: 0 });
    expectOpenAIError(await complete(exhausted.key, valid), 401, 'invalid_request_error', 'invalid_api_key');
  });

  it('is seen by the OpenAI SDK as an AuthenticationError', async () => {
    const client = openAiClient(harness, `sk-${'y'.repeat(48)}`);
    const failure = await client.completions.create(valid).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((failure as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
  });

  it('403 when the key owner is disabled', async () => {
    const customer = await createCustomer(harness.prisma);
    await harness.prisma.user.update({ where: { id: customer.userId }, data: { status: 2 } });
    await harness.relay.cacheSync.apply({ kind: 'user', userId: customer.userId });
    const answer = await complete(customer.key, valid);
    expect(answer.status).toBe(403);
  });

  it('400 invalid_json for a body that is not JSON or not sent as JSON', async () => {
    const { key } = await createCustomer(harness.prisma);
    expectOpenAIError(await complete(key, '{"model": '), 400, 'invalid_request_error', 'invalid_json');
    expectOpenAIError(await complete(key, JSON.stringify(valid), { 'content-type': 'text/plain' }), 400, 'invalid_request_error', 'invalid_json');
  });

  it('400 invalid_request naming the field', async () => {
    const { key } = await createCustomer(harness.prisma);
    expectOpenAIError(await complete(key, { prompt: 'x' }), 400, 'invalid_request_error', 'invalid_request', 'model');
    expectOpenAIError(await complete(key, { model: MODEL }), 400, 'invalid_request_error', 'invalid_request', 'prompt');
    expectOpenAIError(await complete(key, { ...valid, temperature: 3 }), 400, 'invalid_request_error', 'invalid_request', 'temperature');
    expectOpenAIError(await complete(key, { ...valid, max_tokens: 0 }), 400, 'invalid_request_error', 'invalid_request', 'max_tokens');
    expectOpenAIError(await complete(key, { ...valid, stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_request_error', 'invalid_request', 'stop');
  });

  it("403 for a model outside the key's allow-list or a client address outside its IP list", async () => {
    const limited = await createCustomer(harness.prisma, { modelLimitsEnabled: true, modelLimits: 'gpt-4o' });
    expectOpenAIError(await complete(limited.key, valid), 403, 'permission_error', 'model_not_allowed');
    const pinned = await createCustomer(harness.prisma, { allowIps: '203.0.113.0/24\n198.51.100.7' });
    expectOpenAIError(await complete(pinned.key, valid, { 'x-forwarded-for': '192.0.2.1' }), 403, 'permission_error', 'ip_not_allowed');
    expect((await complete(pinned.key, valid, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200);
    expect((await complete(pinned.key, valid, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(200);
  });

  it('403 insufficient_user_quota when the user or the key cannot cover the reservation', async () => {
    const poorUser = await createCustomer(harness.prisma, { quota: 7 });
    expectOpenAIError(await complete(poorUser.key, valid), 403, 'insufficient_quota', 'insufficient_user_quota');
    const poorKey = await createCustomer(harness.prisma, { remainQuota: 7 });
    expectOpenAIError(await complete(poorKey.key, valid), 403, 'insufficient_quota', 'insufficient_user_quota');
    expect((await complete(poorKey.key, { ...valid, max_tokens: 4 })).status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
  });

  it('400 model_price_error when the served model has no price', async () => {
    await openAiChannel(harness.prisma, upstream.url, { models: 'unpriced-model' });
    await harness.reloadCaches();
    const { key } = await createCustomer(harness.prisma);
    expectOpenAIError(await complete(key, { ...valid, model: 'unpriced-model' }), 400, 'invalid_request_error', 'model_price_error');
  });

  it('404 model_not_found when no channel serves the model for the group, 503 when none is enabled', async () => {
    const { key } = await createCustomer(harness.prisma);
    expectOpenAIError(await complete(key, { ...valid, model: 'gpt-4o' }), 404, 'invalid_request_error', 'model_not_found');
    const vip = await createCustomer(harness.prisma, { group: 'vip' });
    expectOpenAIError(await complete(vip.key, valid), 404, 'invalid_request_error', 'model_not_found');
    await harness.prisma.channel.updateMany({ where: { type: 1 }, data: { status: 2 } });
    await harness.reloadCaches();
    expectOpenAIError(await complete(key, valid), 503, 'server_error', 'no_available_channel');
  });

  it('relays an upstream 4xx with its status, secrets and URLs masked, without retrying', async () => {
    await openAiChannel(harness.prisma, upstream.url);
    await harness.reloadCaches();
    upstream.setMode('error400');
    const { key } = await createCustomer(harness.prisma);
    const answer = await complete(key, valid);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' });
    expect(answer.body.error.message).toContain("Invalid value for 'temperature'");
    expect(answer.body.error.message).not.toContain('sk-upstream-openai-secret');
    expect(answer.body.error.message).not.toContain('upstream.internal');
    expect(upstream.requests).toHaveLength(1);
  });

  it('502 upstream_error when every attempt fails, 504 upstream_timeout when the upstream does not answer', async () => {
    const { key } = await createCustomer(harness.prisma);
    upstream.setMode('error500');
    expectOpenAIError(await complete(key, valid), 502, 'upstream_error', 'upstream_error');
    upstream.setMode('reset');
    expectOpenAIError(await complete(key, valid), 502, 'upstream_error', 'upstream_error');
    upstream.setMode('hangBeforeHeaders');
    expectOpenAIError(await complete(key, valid), 504, 'upstream_error', 'upstream_timeout');
    await harness.relay.ledger.flush();
    expect(await consumeLogs(harness.prisma)).toHaveLength(0);
  });

  it('504 for an answer that stalls midway; a stalled stream ends with an upstream_timeout event, then [DONE]', async () => {
    const { key } = await createCustomer(harness.prisma);
    upstream.setMode('hangMidStream');
    expectOpenAIError(await complete(key, valid), 504, 'upstream_error', 'upstream_timeout');

    const response = await fetch(`${harness.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'req-stall' },
      body: JSON.stringify({ ...valid, stream: true }),
    });
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events).toHaveLength(4);
    expect(JSON.parse(events[2]?.slice(6) ?? '{}').error).toEqual({
      message: expect.stringMatching(/ \(request id: req-stall\)$/),
      type: 'upstream_error',
      param: null,
      code: 'upstream_timeout',
    });
    expect(events[3]).toBe('data: [DONE]');
  });

  it('413 request_too_large over MAX_REQUEST_BODY_MB', async () => {
    const { key } = await createCustomer(harness.prisma);
    const answer = await complete(key, { ...valid, prompt: 'x'.repeat(1_100_000) });
    expectOpenAIError(answer, 413, 'invalid_request_error', 'request_too_large');
  });

  it.each([
    ['/v1/completions', 'authorization'],
    ['/v1beta/models/gemini-2.5-flash:generateContent', 'x-goog-api-key'],
  ])('%s: a node:http client uploading 8 MB with a declared length, fast or slow, reads the 413 in the dialect, never a broken pipe', async (path, keyHeader) => {
    const { key } = await createCustomer(harness.prisma);
    const headers = { [keyHeader]: keyHeader === 'authorization' ? `Bearer ${key}` : key, 'x-request-id': 'req-table-1' };
    for (const [pace, times] of [['fast', 20], ['slow', 3]] as const) {
      for (let i = 0; i < times; i++) {
        const outcome = await uploadDeclaredBody(`${harness.url}${path}`, 8 * 1024 * 1024, pace, headers);
        expect(outcome.error).toBeUndefined();
        expect(outcome.status).toBe(413);
        expect(outcome.headers?.connection).toBe('close');
        if (keyHeader === 'authorization') {
          expectOpenAIError({ status: 413, body: outcome.body as Answer['body'] }, 413, 'invalid_request_error', 'request_too_large');
        } else {
          expect(outcome.body).toEqual({ error: { code: 413, message: 'request body exceeds 1 MB', status: 'INVALID_ARGUMENT' } });
        }
      }
    }
  });

  it('an endless body with a declared length gets its 413 at once, then is cut off after the drain bound', async () => {
    const { key } = await createCustomer(harness.prisma);
    const started = Date.now();
    const outcome = await uploadEndlessBody(`${harness.url}/v1/completions`, 1e12, { authorization: `Bearer ${key}` });
    expect(outcome.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.answer).toContain('"code":"request_too_large"');
    expect(outcome.bytesSent).toBeGreaterThan(UNREAD_BODY_DRAIN.maxBytes);
    expect(outcome.bytesSent).toBeLessThan(UNREAD_BODY_DRAIN.maxBytes + 16 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(UNREAD_BODY_DRAIN.maxMs);
  });

  it('checks in the order of docs/api.md 1.3: key before body, body before allow-lists, allow-lists before channels, price before balance', async () => {
    expectOpenAIError(await complete(`sk-${'z'.repeat(48)}`, '{not json'), 401, 'invalid_request_error', 'invalid_api_key');
    const limited = await createCustomer(harness.prisma, { modelLimitsEnabled: true, modelLimits: MODEL, quota: 1 });
    expectOpenAIError(await complete(limited.key, { prompt: 'x' }), 400, 'invalid_request_error', 'invalid_request', 'model');
    expectOpenAIError(await complete(limited.key, { ...valid, model: 'gpt-4o' }), 403, 'permission_error', 'model_not_allowed');
    const open = await createCustomer(harness.prisma, { quota: 1 });
    expectOpenAIError(await complete(open.key, { ...valid, model: 'nobody-serves-this' }), 404, 'invalid_request_error', 'model_not_found');
    await openAiChannel(harness.prisma, upstream.url, { models: 'unpriced-model' });
    await harness.reloadCaches();
    expectOpenAIError(await complete(open.key, { ...valid, model: 'unpriced-model' }), 400, 'invalid_request_error', 'model_price_error');
    expectOpenAIError(await complete(open.key, valid), 403, 'insufficient_quota', 'insufficient_user_quota');
  });
});

describe('keys drained by traffic and IP allow-lists beyond completions', () => {
  it('answers 401 before the allow-list checks once settled charges took a key to 0, on every relay instance', async () => {
    // Each call reserves and costs 8: 3 prompt tokens + 5 completion tokens.
    const drained = await createCustomer(harness.prisma, { remainQuota: 16, modelLimitsEnabled: true, modelLimits: MODEL });
    const other = await startRelay();
    try {
      await other.reloadCaches();
      const viaOther = await fetch(`${other.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${drained.key}` },
        body: JSON.stringify(valid),
      });
      expect(viaOther.status).toBe(200);
      expect((await complete(drained.key, valid)).status).toBe(200);
      // Charges settle just after each answer is sent: once both have, this instance knows without a database read.
      await eventually(async () => {
        expectOpenAIError(await complete(drained.key, { ...valid, model: 'gpt-4o' }), 401, 'invalid_request_error', 'invalid_api_key');
      });
      // The other one learns it once the charge is written.
      await eventually(async () => {
        const answer = await fetch(`${other.url}/v1/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${drained.key}` },
          body: JSON.stringify({ ...valid, model: 'gpt-4o' }),
        });
        expect(answer.status).toBe(401);
      });
    } finally {
      await other.close();
    }
  });

  it('applies the IP allow-list to the model lists', async () => {
    const pinned = await createCustomer(harness.prisma, { allowIps: '203.0.113.0/24' });
    const list = (path: string, ip: string) =>
      fetch(`${harness.url}${path}`, { headers: { authorization: `Bearer ${pinned.key}`, 'x-forwarded-for': ip, 'x-request-id': 'req-table-1' } });
    const refused = await list('/v1/models', '192.0.2.1');
    expectOpenAIError({ status: refused.status, body: (await refused.json()) as Answer['body'] }, 403, 'permission_error', 'ip_not_allowed');
    const refusedGoogle = await list('/v1beta/models', '192.0.2.1');
    expect(refusedGoogle.status).toBe(403);
    expect(((await refusedGoogle.json()) as Answer['body']).error.status).toBe('PERMISSION_DENIED');
    expect((await list('/v1/models', '203.0.113.9')).status).toBe(200);
    expect((await list('/v1beta/models', '203.0.113.9')).status).toBe(200);
  });
});

describe('relay error table (Google dialect)', () => {
  function expectGoogleError(answer: Answer, code: number, status: string) {
    expect(answer.status).toBe(code);
    expect(answer.body.error).toEqual({ code, message: expect.any(String), status });
  }

  it('answers every failure in the Google shape', async () => {
    expectGoogleError(await generate(undefined, gemini), 401, 'UNAUTHENTICATED');
    const { key } = await createCustomer(harness.prisma);
    expectGoogleError(await generate(key, { contents: [] }), 400, 'INVALID_ARGUMENT');
    expectGoogleError(await generate(key, gemini, 'gemini-unknown'), 404, 'NOT_FOUND');
    const limited = await createCustomer(harness.prisma, { modelLimitsEnabled: true, modelLimits: MODEL });
    expectGoogleError(await generate(limited.key, gemini), 403, 'PERMISSION_DENIED');
    const poor = await createCustomer(harness.prisma, { quota: 1 });
    expectGoogleError(await generate(poor.key, gemini), 403, 'PERMISSION_DENIED');
    upstream.setMode('error500');
    expectGoogleError(await generate(key, gemini), 502, 'UNAVAILABLE');
    upstream.setMode('hangBeforeHeaders');
    expectGoogleError(await generate(key, gemini), 504, 'DEADLINE_EXCEEDED');
    upstream.setMode('error400');
    const relayed = await generate(key, gemini);
    expectGoogleError(relayed, 400, 'INVALID_ARGUMENT');
    expect(relayed.body.error.message).not.toContain('gemini-channel-key');
    expect(relayed.body.error.message).not.toContain('upstream.internal');
  });

  it('accepts the key as ?key= and as a Bearer token, with or without sk-', async () => {
    const { key } = await createCustomer(harness.prisma);
    const byQuery = await fetch(`${harness.url}/v1beta/models/gemini-2.5-flash:generateContent?key=${key.slice(3)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(gemini),
    });
    expect(byQuery.status).toBe(200);
    const byBearer = await fetch(`${harness.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(gemini),
    });
    expect(byBearer.status).toBe(200);
    for (const request of upstream.requests) {
      expect(request.url).not.toContain(key.slice(3));
      expect(request.headers['x-goog-api-key']).toBe('gemini-channel-key');
      expect(request.headers.authorization).toBeUndefined();
    }
  });
});
