import { decryptSecret } from '@modelgate/db';
import { createChannel } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { FakeUpstream } from './support/fake-upstream';
import { listenForInvalidations } from './support/invalidations';
import { relayForChannelTests } from './support/relay';
import { loggedInUser, type LoggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;
const CHANNEL_KEY = 'sk-upstream-secret-0123456789';

beforeEach(() => account.reset());
afterAll(() => account.close());

interface ChannelView {
  id: number;
  type: number;
  name: string;
  base_url: string;
  models: string;
  groups: string;
  model_mapping: string;
  status: number;
  settings: Record<string, unknown>;
  response_time_ms: number;
  tested_at: number | null;
}

const admin = () => loggedInUser(account, { role: ROLE.admin });

describe('channel CRUD (admin)', () => {
  it('creates, reads, lists, updates and deletes; the key is stored encrypted and never returned', async () => {
    const { agent } = await admin();
    const createdRes = await agent.post('/api/channel/').send({
      name: 'openai main',
      type: 1,
      key: CHANNEL_KEY,
      base_url: 'https://upstream.example.com/',
      models: 'gpt-4o-mini, gpt-3.5-turbo-instruct',
      model_mapping: { 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' },
      priority: 5,
    });
    const created = expectOk(createdRes) as ChannelView;
    expect(created).toMatchObject({
      type: 1,
      name: 'openai main',
      base_url: 'https://upstream.example.com',
      models: 'gpt-4o-mini,gpt-3.5-turbo-instruct',
      groups: 'default',
      model_mapping: '{"gpt-4o-mini":"gpt-4o-mini-2024-07-18"}',
      status: 1,
    });
    const row = await prisma.channel.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.keyEnc).not.toContain(CHANNEL_KEY);
    expect(decryptSecret(row.keyEnc, account.deps.env.CRYPTO_SECRET)).toBe(CHANNEL_KEY);

    const fetched = await agent.get(`/api/channel/${created.id}`);
    const listed = await agent.get('/api/channel/?p=1&page_size=10');
    const updated = await agent.put('/api/channel/').send({ id: created.id, key: 'sk-rotated-key-abcdef', status: 2, model_mapping: '', groups: 'default,vip' });
    for (const res of [createdRes, fetched, listed, updated]) {
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toMatch(/sk-upstream-secret|sk-rotated-key|"key"|key_enc/);
    }
    expect(listed.body.data).toMatchObject({ page: 1, page_size: 10, total: 1 });
    expect(updated.body.data).toMatchObject({ status: 2, model_mapping: '', groups: 'default,vip' });
    const rotated = await prisma.channel.findUniqueOrThrow({ where: { id: created.id } });
    expect(decryptSecret(rotated.keyEnc, account.deps.env.CRYPTO_SECRET)).toBe('sk-rotated-key-abcdef');
    expect(rotated.statusChangedAt).not.toBeNull();

    expectOk(await agent.delete(`/api/channel/${created.id}`));
    expectFailure(await agent.get(`/api/channel/${created.id}`), 404, 'not_found');
    expectFailure(await agent.delete(`/api/channel/${created.id}`), 404, 'not_found');
    expectFailure(await agent.put('/api/channel/').send({ id: created.id, name: 'x' }), 404, 'not_found');
  });

  it("keeps base_url '' (the type's default) when none is given, so a type change follows the new type", async () => {
    const { agent } = await admin();
    const created = expectOk(await agent.post('/api/channel/').send({ name: 'g', type: 1, key: 'k', models: 'gemini-2.5-flash' })) as ChannelView;
    expect(created.base_url).toBe('');
    const switched = expectOk(await agent.put('/api/channel/').send({ id: created.id, type: 24, key: 'k2' })) as ChannelView;
    expect(switched).toMatchObject({ type: 24, base_url: '' });
    expect(await prisma.channel.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({ type: 24, baseUrl: '' });
    const custom = expectOk(await agent.put('/api/channel/').send({ id: created.id, base_url: 'https://proxy.example.com/', key: 'k3' })) as ChannelView;
    expect(custom.base_url).toBe('https://proxy.example.com');
    expect(expectOk(await agent.put('/api/channel/').send({ id: created.id, base_url: '', key: 'k4' }))).toMatchObject({ base_url: '' });
  });

  it("on a type change, lets go of the old type's default written out by earlier versions, but keeps a custom base_url", async () => {
    const { agent } = await admin();
    const legacy = await createChannel(prisma, { type: 1, baseUrl: 'https://api.openai.com' });
    const custom = await createChannel(prisma, { type: 1, baseUrl: 'https://proxy.example.com' });
    expect(expectOk(await agent.put('/api/channel/').send({ id: legacy.id, type: 24, key: 'k' }))).toMatchObject({ type: 24, base_url: '' });
    expect(expectOk(await agent.put('/api/channel/').send({ id: custom.id, type: 24, key: 'k' }))).toMatchObject({ type: 24, base_url: 'https://proxy.example.com' });
    const renamed = await createChannel(prisma, { type: 1, baseUrl: 'https://api.openai.com' });
    expect(expectOk(await agent.put('/api/channel/').send({ id: renamed.id, type: 1, name: 'same type' }))).toMatchObject({ base_url: 'https://api.openai.com' });
  });

  it('creates Anthropic channels (type 14) and keeps the settings each type declares', async () => {
    const { agent } = await admin();
    const anthropic = expectOk(await agent.post('/api/channel/').send({ name: 'claude', type: 14, key: 'k', models: 'claude-sonnet-4-5' })) as ChannelView;
    expect(anthropic).toMatchObject({ type: 14, base_url: '', settings: {} });
    const openai = expectOk(
      await agent.post('/api/channel/').send({ name: 'vllm', type: 1, key: 'k', models: 'm', settings: { responses: 'chat' } }),
    ) as ChannelView;
    expect(openai.settings).toEqual({ responses: 'chat' });
    expect((await prisma.channel.findUniqueOrThrow({ where: { id: openai.id } })).settings).toEqual({ responses: 'chat' });
    expect(expectOk(await agent.get(`/api/channel/${openai.id}`))).toMatchObject({ settings: { responses: 'chat' } });

    expect(expectOk(await agent.put('/api/channel/').send({ id: openai.id, settings: { responses: 'native' } }))).toMatchObject({
      settings: { responses: 'native' },
    });
    // Settings the new type does not declare make the type change invalid, unless they go with it.
    expectFailure(await agent.put('/api/channel/').send({ id: openai.id, type: 14, key: 'k' }), 400, 'invalid_request', /^settings\.responses: channel type 14/);
    expect((await prisma.channel.findUniqueOrThrow({ where: { id: openai.id } })).type).toBe(1);
    expect(expectOk(await agent.put('/api/channel/').send({ id: openai.id, type: 14, key: 'k', settings: {} }))).toMatchObject({ type: 14, settings: {} });
    expectFailure(await agent.put('/api/channel/').send({ id: anthropic.id, settings: { responses: 'chat' } }), 400, 'invalid_request', /settings\.responses/);
    expect(expectOk(await agent.put('/api/channel/').send({ id: anthropic.id, type: 1, key: 'k', settings: { responses: 'chat' } }))).toMatchObject({
      type: 1,
      settings: { responses: 'chat' },
    });
  });

  it.each([
    [{ type: 1, key: 'k', models: 'm' }, /name/],
    [{ name: 'n', type: 2, key: 'k', models: 'm' }, /type/],
    [{ name: 'n', type: 1, models: 'm' }, /key/],
    [{ name: 'n', type: 1, key: 'k', models: ' , ' }, /models/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', base_url: 'ftp://x' }, /base_url/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', model_mapping: '{not json' }, /model_mapping/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', model_mapping: { a: 1 } }, /model_mapping: entry "a" must map a model name/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', model_mapping: '["a"]' }, /model_mapping: must be a JSON object/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', model_mapping: null }, /model_mapping: must be a JSON object/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', groups: 'bad group' }, /groups/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', used_quota: 5 }, /used_quota/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', settings: { responses: 'both' } }, /settings\.responses: must be "native" or "chat"/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', settings: { timeout: 5 } }, /settings\.timeout: channel type 1 \(OpenAI-compatible\) has no setting "timeout"/],
    [{ name: 'n', type: 14, key: 'k', models: 'm', settings: { responses: 'chat' } }, /settings\.responses: channel type 14 \(Anthropic\)/],
    [{ name: 'n', type: 24, key: 'k', models: 'm', settings: { responses: 'native' } }, /settings\.responses/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', settings: '{"responses":"chat"}' }, /settings: must be a JSON object/],
    [{ name: 'n', type: 1, key: 'k', models: 'm', settings: null }, /settings: must be a JSON object/],
    [{ name: 'n', type: 3, key: 'k', models: 'm' }, /^base_url: Azure OpenAI channels need their endpoint/],
    [{ name: 'n', type: 33, key: 'AKID|', models: 'm', settings: { region: 'us-east-1' } }, /^key: must be ACCESS_KEY_ID.* \(AWS Bedrock\)$/],
    [{ name: 'n', type: 33, key: 'AKID|secret', models: 'm' }, /^settings\.region: AWS Bedrock channels need a region/],
    [{ name: 'n', type: 41, key: 'AIza-not-a-key-file', models: 'm' }, /^key: must be the service account key file \(JSON\) \(Google Vertex AI\)$/],
  ])('rejects %j with 400', async (body, field) => {
    const { agent } = await admin();
    expectFailure(await agent.post('/api/channel/').send(body), 400, 'invalid_request', field);
  });

  it('is closed to common users (403) and anonymous callers (401)', async () => {
    const user = await loggedInUser(account);
    const channel = await createChannel(prisma);
    for (const res of [
      await user.agent.get('/api/channel/'),
      await user.agent.get(`/api/channel/${channel.id}`),
      await user.agent.post('/api/channel/').send({ name: 'n', type: 1, key: 'k', models: 'm' }),
      await user.agent.put('/api/channel/').send({ id: channel.id, name: 'x' }),
      await user.agent.delete(`/api/channel/${channel.id}`),
      await user.agent.get(`/api/channel/test/${channel.id}`),
    ]) {
      expectFailure(res, 403, 'forbidden');
    }
    expectFailure(await request(app).get('/api/channel/'), 401, 'unauthorized');
    expect(await prisma.channel.count()).toBe(1);
  });
});

describe('POST /api/channel/batch', () => {
  let adminUser: LoggedInUser;
  beforeEach(async () => {
    adminUser = await admin();
  });

  it('deletes the listed channels in one go and answers how many were actually deleted', async () => {
    const [first, second, third, fourth] = await Promise.all([createChannel(prisma), createChannel(prisma), createChannel(prisma), createChannel(prisma)]);
    const ids = [first.id, third.id, 999_999, first.id];
    expect(expectOk(await adminUser.agent.post('/api/channel/batch').send({ ids }))).toBe(2);
    expect((await prisma.channel.findMany({ orderBy: { id: 'asc' } })).map((c) => c.id)).toEqual([second.id, fourth.id]);
    expect(expectOk(await adminUser.agent.post('/api/channel/batch').send({ ids: [999_998] }))).toBe(0);
  });

  it('accepts 1000 ids', async () => {
    await createChannel(prisma);
    const ids = Array.from({ length: 1000 }, (_, i) => i + 1);
    expect(expectOk(await adminUser.agent.post('/api/channel/batch').send({ ids }))).toBe(1);
  });

  it.each([
    ['no ids', {}],
    ['an empty list', { ids: [] }],
    ['1001 ids', { ids: Array.from({ length: 1001 }, (_, i) => i + 1) }],
    ['a string id', { ids: [1, '2'] }],
    ['a fractional id', { ids: [1.5] }],
    ['a negative id', { ids: [-1] }],
    ['ids not a list', { ids: 5 }],
    ['an extra field', { ids: [1], force: true }],
  ])('rejects a body with %s with 400 and deletes nothing', async (_label, body) => {
    await createChannel(prisma);
    expectFailure(await adminUser.agent.post('/api/channel/batch').send(body), 400, 'invalid_request');
    expect(await prisma.channel.count()).toBe(1);
  });

  it('rejects a non-JSON body with 400', async () => {
    const res = await adminUser.agent.post('/api/channel/batch').set('Content-Type', 'application/json').send('{"ids": [1,');
    expectFailure(res, 400, 'invalid_request');
  });

  it('is forbidden to common users (403), whatever the body', async () => {
    const channel = await createChannel(prisma);
    const user = await loggedInUser(account);
    expectFailure(await user.agent.post('/api/channel/batch').send({ ids: [channel.id] }), 403, 'forbidden');
    expectFailure(await user.agent.post('/api/channel/batch').send({ ids: [] }), 403, 'forbidden');
    expect(await prisma.channel.count()).toBe(1);
  });
});

describe('routing updates reach relays', () => {
  it('publishes a channels invalidation within 2 s of each change', async () => {
    const listener = await listenForInvalidations();
    try {
      const { agent } = await admin();
      const created = expectOk(await agent.post('/api/channel/').send({ name: 'n', type: 1, key: 'k', models: 'm' })) as ChannelView;
      await expect(listener.next()).resolves.toEqual({ kind: 'channels' });
      await agent.put('/api/channel/').send({ id: created.id, status: 2 }).expect(200);
      await expect(listener.next()).resolves.toEqual({ kind: 'channels' });
      await agent.post('/api/channel/batch').send({ ids: [created.id] }).expect(200);
      await expect(listener.next()).resolves.toEqual({ kind: 'channels' });
    } finally {
      await listener.close();
    }
  });
});

describe('GET /api/channel/test/:id (run by the relay)', () => {
  relayForChannelTests(account);
  const upstream = new FakeUpstream();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await upstream.start();
  });
  afterAll(() => upstream.stop());
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('sends one small chat completion through an OpenAI-compatible channel and records its response time', async () => {
    const { agent } = await admin();
    upstream.reply = { status: 200, body: { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ message: { role: 'assistant', content: '!' } }] } };
    const channel = await createChannel(prisma, {
      baseUrl,
      key: CHANNEL_KEY,
      models: 'gpt-4o-mini,davinci-002',
      modelMapping: JSON.stringify({ 'davinci-002': 'davinci-002-upstream' }),
    });
    const result = expectOk(await agent.get(`/api/channel/test/${channel.id}?model=davinci-002`)) as { success: boolean; message: string; time_ms: number };
    expect(result).toEqual({ success: true, message: '', time_ms: expect.any(Number) });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      body: { model: 'davinci-002-upstream', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 1 },
    });
    expect(upstream.requests[0]?.headers).toMatchObject({ authorization: `Bearer ${CHANNEL_KEY}`, 'content-type': 'application/json' });
    const row = await prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(row.testedAt).not.toBeNull();
    expect(row.responseTimeMs).toBe(result.time_ms);
    const view = expectOk(await agent.get(`/api/channel/${channel.id}`)) as ChannelView;
    expect(view.tested_at).toEqual(expect.any(Number));
  });

  it('tests an Anthropic channel with a Messages request, its key in x-api-key', async () => {
    const { agent } = await admin();
    upstream.reply = { status: 200, body: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'H' }] } };
    const channel = await createChannel(prisma, { type: 14, baseUrl: `${baseUrl}/proxy`, key: CHANNEL_KEY, models: 'claude-haiku-4-5' });
    expect(expectOk(await agent.get(`/api/channel/test/${channel.id}`))).toMatchObject({ success: true });
    expect(upstream.requests[0]).toMatchObject({
      method: 'POST',
      path: '/proxy/v1/messages',
      body: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], max_tokens: 1 },
    });
    expect(upstream.requests[0]?.headers).toMatchObject({ 'x-api-key': CHANNEL_KEY, 'anthropic-version': '2023-06-01' });
    expect(upstream.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("reports an Anthropic error in the upstream's words, without the key", async () => {
    const { agent } = await admin();
    upstream.reply = { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${CHANNEL_KEY}` } } };
    const channel = await createChannel(prisma, { type: 14, baseUrl, key: CHANNEL_KEY, models: 'claude-haiku-4-5' });
    const res = await agent.get(`/api/channel/test/${channel.id}`);
    expect(expectOk(res)).toMatchObject({ success: false, message: 'upstream answered 401: invalid x-api-key [redacted]' });
    expect(JSON.stringify(res.body)).not.toContain(CHANNEL_KEY);
  });

  it('tests a Gemini channel with generateContent, defaulting to its first model', async () => {
    const { agent } = await admin();
    upstream.reply = { status: 200, body: { candidates: [] } };
    const channel = await createChannel(prisma, { type: 24, baseUrl, key: CHANNEL_KEY, models: 'gemini-2.5-flash,gemini-2.5-pro' });
    expect(expectOk(await agent.get(`/api/channel/test/${channel.id}`))).toMatchObject({ success: true });
    expect(upstream.requests[0]).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:generateContent' });
    expect(upstream.requests[0]?.headers['x-goog-api-key']).toBe(CHANNEL_KEY);
    expect(upstream.requests[0]?.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('reports an upstream refusal without revealing the key', async () => {
    const { agent } = await admin();
    upstream.reply = { status: 401, body: { error: { message: `Incorrect API key provided: ${CHANNEL_KEY}` } } };
    const channel = await createChannel(prisma, { baseUrl, key: CHANNEL_KEY });
    const res = await agent.get(`/api/channel/test/${channel.id}`);
    const result = expectOk(res) as { success: boolean; message: string };
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/401/);
    expect(JSON.stringify(res.body)).not.toContain(CHANNEL_KEY);
  });

  it('sends the stored key only to the address it was entered for: a new base_url or type needs a new key', async () => {
    const { agent } = await admin();
    upstream.reply = { status: 200, body: { id: 'chatcmpl-1', object: 'chat.completion', choices: [] } };
    const channel = await createChannel(prisma, { baseUrl: `${baseUrl}/entered`, key: CHANNEL_KEY, models: 'gpt-4o-mini' });
    const before = await prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });

    for (const edit of [{ base_url: `${baseUrl}/elsewhere` }, { base_url: '' }, { type: 14 }, { type: 24, base_url: `${baseUrl}/entered` }]) {
      expectFailure(await agent.put('/api/channel/').send({ id: channel.id, name: 'moved', ...edit }), 400, 'invalid_request', /^key: /);
    }
    expect(await prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).toEqual(before);
    expectOk(await agent.get(`/api/channel/test/${channel.id}`));
    expect(upstream.requests.map((sent) => [sent.path, sent.headers.authorization])).toEqual([['/entered/v1/chat/completions', `Bearer ${CHANNEL_KEY}`]]);

    // The same address, written out again (the console sends every field), needs no key.
    expect(expectOk(await agent.put('/api/channel/').send({ id: channel.id, base_url: `${baseUrl}/entered/`, type: 1, priority: 3 }))).toMatchObject({
      priority: 3,
    });
    const unnamed = await createChannel(prisma, { type: 14, baseUrl: '' });
    expectOk(await agent.put('/api/channel/').send({ id: unnamed.id, base_url: 'https://api.anthropic.com' }));

    // With a new key the channel moves, and the test follows it with that key.
    expectOk(await agent.put('/api/channel/').send({ id: channel.id, base_url: `${baseUrl}/elsewhere`, key: 'sk-for-elsewhere' }));
    expectOk(await agent.get(`/api/channel/test/${channel.id}`));
    expect(upstream.requests[1]).toMatchObject({ path: '/elsewhere/v1/chat/completions', headers: { authorization: 'Bearer sk-for-elsewhere' } });
  });

  it('reports an unreachable upstream, and 404 for an unknown channel', async () => {
    const { agent } = await admin();
    const channel = await createChannel(prisma, { baseUrl: 'http://127.0.0.1:9', key: CHANNEL_KEY });
    expect(expectOk(await agent.get(`/api/channel/test/${channel.id}`))).toMatchObject({ success: false, message: expect.stringMatching(/unreachable/) });
    expectFailure(await agent.get('/api/channel/test/424242'), 404, 'not_found');
  });
});
