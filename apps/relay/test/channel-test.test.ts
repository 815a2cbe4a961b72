// The channel test behind the account service's GET /api/channel/test/:id (docs/api.md 3.3): the
// relay sends one small chat request through the channel's own provider and reports the outcome.
import { internalApiToken } from '@modelgate/config';
import { CHANNEL_STATUS, CHANNEL_TEST_PATH } from '@modelgate/schemas';
import { createChannel } from '@modelgate/testing';
import {
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  FAKE_VERTEX_PROJECT,
  fakeVertexServiceAccount,
  VERTEX_TOKEN_PATH,
} from '@modelgate/testing/fake-upstream';
import { harness, relaySuite, resetSuite, upstream } from './harness';

relaySuite();
beforeEach(() => resetSuite());

const KEY = 'sk-channel-test-secret-0123';

function postTest(body: unknown, token: string | null = internalApiToken(process.env.CRYPTO_SECRET!)) {
  return fetch(`${harness.url}${CHANNEL_TEST_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
}

describe(`POST ${CHANNEL_TEST_PATH}`, () => {
  it('sends one small chat request through an OpenAI-compatible channel, the model mapped, and times it', async () => {
    const channel = await createChannel(harness.prisma, {
      baseUrl: upstream.url,
      key: KEY,
      models: 'gpt-4o-mini',
      modelMapping: JSON.stringify({ 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' }),
    });
    const res = await postTest({ channel_id: channel.id, model: 'gpt-4o-mini' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, message: '', time_ms: expect.any(Number) });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]).toMatchObject({ path: '/v1/chat/completions', json: { model: 'gpt-4o-mini-2024-07-18', max_completion_tokens: 1 } });
    expect(upstream.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("tests a disabled Anthropic channel in its own dialect and reports a refusal in the upstream's words without the key", async () => {
    const channel = await createChannel(harness.prisma, { type: 14, baseUrl: upstream.url, key: KEY, models: 'claude-haiku-4-5', status: CHANNEL_STATUS.manuallyDisabled });
    upstream.setMode('error401');
    const res = await postTest({ channel_id: channel.id, model: 'claude-haiku-4-5' });
    const result = (await res.json()) as { success: boolean; message: string };
    expect(result).toMatchObject({ success: false, message: expect.stringMatching(/^upstream answered 401/) });
    expect(JSON.stringify(result)).not.toContain(KEY);
    expect(upstream.requests[0]).toMatchObject({ path: '/v1/messages', json: { max_tokens: 1 } });
    expect(upstream.requests[0]?.headers['x-api-key']).toBe(KEY);
  });

  it('tests a Gemini channel with generateContent', async () => {
    const channel = await createChannel(harness.prisma, { type: 24, baseUrl: upstream.url, key: KEY, models: 'gemini-2.5-flash' });
    const res = await postTest({ channel_id: channel.id, model: 'gemini-2.5-flash' });
    expect(await res.json()).toMatchObject({ success: true });
    expect(upstream.requests[0]).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:generateContent', json: { generationConfig: { maxOutputTokens: 1 } } });
  });

  it('tests an Azure deployment on its chat route with the api-key header', async () => {
    const channel = await createChannel(harness.prisma, { type: 3, baseUrl: upstream.url, key: KEY, models: 'gpt-4o', modelMapping: JSON.stringify({ 'gpt-4o': 'prod-4o' }) });
    expect(await (await postTest({ channel_id: channel.id, model: 'gpt-4o' })).json()).toMatchObject({ success: true });
    expect(upstream.requests[0]).toMatchObject({ path: '/openai/deployments/prod-4o/chat/completions', json: { max_completion_tokens: 1 } });
    expect(upstream.requests[0]?.headers['api-key']).toBe(KEY);
  });

  it('tests a Bedrock channel with a SigV4-signed Converse request, and reports a refused key without any secret', async () => {
    const key = `${FAKE_AWS_ACCESS_KEY_ID}|${FAKE_AWS_SECRET_ACCESS_KEY}`;
    const settings = { region: 'us-east-1' };
    const channel = await createChannel(harness.prisma, { type: 33, baseUrl: upstream.url, key, models: 'amazon.nova-pro-v1:0', settings });
    expect(await (await postTest({ channel_id: channel.id, model: 'amazon.nova-pro-v1:0' })).json()).toMatchObject({ success: true });
    expect(upstream.requests[0]).toMatchObject({ path: '/model/amazon.nova-pro-v1%3A0/converse', json: { inferenceConfig: { maxTokens: 1 } } });
    expect(upstream.requests[0]?.cloud).toMatchObject({ auth: 'sigv4', region: 'us-east-1' });

    const wrongSecret = `${FAKE_AWS_ACCESS_KEY_ID}|not-the-secret-0123456789`;
    const refused = await createChannel(harness.prisma, { type: 33, baseUrl: upstream.url, key: wrongSecret, models: 'anthropic.claude-haiku-4-5', settings });
    const result = (await (await postTest({ channel_id: refused.id, model: 'anthropic.claude-haiku-4-5' })).json()) as { success: boolean; message: string };
    expect(result).toMatchObject({ success: false, message: expect.stringMatching(/^upstream answered 403/) });
    for (const secret of ['not-the-secret-0123456789', FAKE_AWS_ACCESS_KEY_ID]) expect(result.message).not.toContain(secret);
  });

  it('tests a Vertex channel: the token exchange first, then generateContent with the token', async () => {
    const channel = await createChannel(harness.prisma, { type: 41, baseUrl: upstream.url, key: fakeVertexServiceAccount(upstream.url), models: 'gemini-2.5-flash' });
    expect(await (await postTest({ channel_id: channel.id, model: 'gemini-2.5-flash' })).json()).toMatchObject({ success: true });
    expect(upstream.requests.map((request) => request.path)).toEqual([
      VERTEX_TOKEN_PATH,
      `/v1/projects/${FAKE_VERTEX_PROJECT}/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`,
    ]);
  });

  it('says when the upstream cannot be reached', async () => {
    const channel = await createChannel(harness.prisma, { baseUrl: 'http://127.0.0.1:9', key: KEY, models: 'gpt-4o-mini' });
    expect(await (await postTest({ channel_id: channel.id, model: 'gpt-4o-mini' })).json()).toMatchObject({
      success: false,
      message: expect.stringMatching(/^upstream unreachable/),
    });
  });

  it('refuses a caller without the internal token, a bad body and an unknown channel', async () => {
    expect((await postTest({ channel_id: 1, model: 'm' }, null)).status).toBe(401);
    expect((await postTest({ channel_id: 1, model: 'm' }, 'not-the-token')).status).toBe(401);
    expect((await postTest({ channel_id: 'x', model: 'm' })).status).toBe(400);
    expect((await postTest({ channel_id: 999_999, model: 'm' })).status).toBe(404);
    expect(upstream.requests).toHaveLength(0);
  });
});
