// docs/api.md 2.4: priority tiers, retries before the first byte only, auto_ban, cool-downs, pub/sub reloads.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CACHE_INVALIDATION_CHANNEL } from '@modelgate/schemas';
import { redisPrefix } from '@modelgate/testing';
import { backup, consumeLogs, createCustomer, eventually, harness, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream as primary } from './harness';

relaySuite({ CHANNEL_COOLDOWN_MS: '60000' }, { upstreams: 2 });

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
});

/** The primary channel in the higher tier, the backup below it. */
async function twoTiers(primaryFields: Parameters<typeof openAiChannel>[2] = {}) {
  const first = await openAiChannel(harness.prisma, primary.url, { priority: 10, ...primaryFields });
  const second = await openAiChannel(harness.prisma, backup.url, { priority: 0 });
  await harness.reloadCaches();
  return { first, second };
}

describe('routing', () => {
  it('uses the highest priority tier while it is healthy', async () => {
    await twoTiers();
    const { key } = await createCustomer(harness.prisma);
    const client = openAiClient(harness, key);
    for (let i = 0; i < 5; i++) await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 2 });
    expect(primary.requests).toHaveLength(5);
    expect(backup.requests).toHaveLength(0);
  });

  it('spreads a tier by weight', async () => {
    await openAiChannel(harness.prisma, primary.url, { weight: 1 });
    await openAiChannel(harness.prisma, backup.url, { weight: 9 });
    await harness.reloadCaches();
    const { key } = await createCustomer(harness.prisma);
    const client = openAiClient(harness, key);
    await Promise.all(Array.from({ length: 60 }, () => client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 })));
    expect(backup.requests.length).toBeGreaterThan(primary.requests.length);
    expect(primary.requests.length + backup.requests.length).toBe(60);
  });

  it.each(['error500', 'error429', 'reset'] as const)(
    'retries a %s on the next channel and bills only the successful attempt',
    async (mode) => {
      const { second } = await twoTiers();
      primary.setMode(mode);
      const customer = await createCustomer(harness.prisma);
      const completion = await openAiClient(harness, customer.key).completions.create({ model: MODEL, prompt: [1, 2], max_tokens: 3 });
      expect(completion.choices[0]?.text).toBe(' hello'.repeat(3));
      expect(primary.requests).toHaveLength(1);
      expect(backup.requests).toHaveLength(1);

      await harness.relay.ledger.flush();
      const logs = await consumeLogs(harness.prisma);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({ channelId: second.id, quota: -5n });
      const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
      expect(user.quota).toBe(1_000_000n - 5n);
    },
  );

  it('treats a redirect (a base URL that moved) as a failure of that channel: the next one serves the call', async () => {
    const moved = createServer((req, res) => {
      req.resume();
      res.writeHead(301, { location: 'https://moved.example/v1/completions' }).end();
    });
    await new Promise<void>((resolve) => moved.listen(0, '127.0.0.1', resolve));
    try {
      await openAiChannel(harness.prisma, `http://127.0.0.1:${(moved.address() as AddressInfo).port}`, { priority: 10 });
      await openAiChannel(harness.prisma, backup.url, { priority: 0 });
      await harness.reloadCaches();
      const { key } = await createCustomer(harness.prisma);
      const answer = await openAiClient(harness, key).completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
      expect(answer.choices[0]?.text).toBe(' hello');
      expect(backup.requests).toHaveLength(1);
    } finally {
      await new Promise((resolve) => moved.close(resolve));
    }
  });

  it('stops after RetryTimes extra attempts', async () => {
    for (let i = 0; i < 4; i++) await openAiChannel(harness.prisma, primary.url, { priority: 10 - i });
    await harness.prisma.option.create({ data: { key: 'RetryTimes', value: '1' } });
    await harness.reloadCaches();
    primary.setMode('error500');
    const { key } = await createCustomer(harness.prisma);
    const failure = await openAiClient(harness, key).completions.create({ model: MODEL, prompt: [1], max_tokens: 1 }).catch((e: unknown) => e);
    expect((failure as { status: number }).status).toBe(502);
    expect(primary.requests).toHaveLength(2);
  });

  it('never retries after the first byte reached the client: the stream ends with an error event, then [DONE]', async () => {
    await twoTiers();
    primary.setMode('resetMidStream');
    const customer = await createCustomer(harness.prisma);
    const response = await fetch(`${harness.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: [1, 2], max_tokens: 5, stream: true }),
    });
    expect(response.status).toBe(200);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events).toHaveLength(4);
    expect(JSON.parse(events[0]?.slice(6) ?? '{}').choices[0].text).toBe(' hello');
    expect(JSON.parse(events[2]?.slice(6) ?? '{}').error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(events[3]).toBe('data: [DONE]');
    expect(backup.requests).toHaveLength(0);

    // Charged for the two pieces that were delivered.
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ promptTokens: 2, completionTokens: 2, quota: -4n, isStream: true });
  });

  it('makes the OpenAI SDK throw on a stream that fails midway', async () => {
    await twoTiers();
    primary.setMode('malformedSse');
    const { key } = await createCustomer(harness.prisma);
    const stream = await openAiClient(harness, key).completions.create({ model: MODEL, prompt: [1], max_tokens: 5, stream: true });
    const texts: string[] = [];
    await expect((async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.text ?? '');
    })()).rejects.toThrow(/malformed/);
    expect(texts).toEqual([' hello']);
    expect(backup.requests).toHaveLength(0);
  });

  it('retries a stream that failed before its first event', async () => {
    await twoTiers();
    primary.setMode('reset');
    const { key } = await createCustomer(harness.prisma);
    const stream = await openAiClient(harness, key).completions.create({ model: MODEL, prompt: [1], max_tokens: 3, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe(' hello'.repeat(3));
    expect(backup.requests).toHaveLength(1);
  });

  it.each([
    ['error401', 401, 'upstream answered 401'],
    ['error403', 403, 'upstream answered 403'],
    ['quotaExhausted', 429, 'upstream quota exhausted'],
  ] as const)('auto_ban disables a channel answering %s, with reason and time', async (mode, status, reason) => {
    const { first } = await twoTiers();
    primary.setMode(mode);
    const { key } = await createCustomer(harness.prisma);
    const client = openAiClient(harness, key);
    const before = Date.now();
    const outcome = await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 }).catch((e: unknown) => e);
    // The channel is unusable, not the request: the call moves on to the next channel.
    expect(outcome).toHaveProperty('choices');

    const banned = await harness.prisma.channel.findUniqueOrThrow({ where: { id: first.id } });
    expect(banned.status).toBe(3);
    expect(banned.statusReason).toContain(reason);
    expect(banned.statusReason).not.toContain('sk-upstream-openai-secret');
    expect(banned.statusChangedAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);

    await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests.length).toBeGreaterThanOrEqual(1);
  });

  it('leaves a channel with auto_ban off enabled, and serves the call from the next one', async () => {
    const { first } = await twoTiers({ autoBan: false });
    primary.setMode('error401');
    const { key } = await createCustomer(harness.prisma);
    const answer = await openAiClient(harness, key).completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
    expect(answer.choices[0]?.text).toBe(' hello');
    expect((await harness.prisma.channel.findUniqueOrThrow({ where: { id: first.id } })).status).toBe(1);
  });

  it('only cools a channel down after a transient failure: others go first, it stays enabled', async () => {
    const { first } = await twoTiers();
    primary.setMode('error500');
    const { key } = await createCustomer(harness.prisma);
    const client = openAiClient(harness, key);
    for (let i = 0; i < 4; i++) await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(4);
    expect((await harness.prisma.channel.findUniqueOrThrow({ where: { id: first.id } })).status).toBe(1);
  });

  it('applies channel changes published by the account service within 2 s', async () => {
    const { first } = await twoTiers();
    const { key } = await createCustomer(harness.prisma);
    const client = openAiClient(harness, key);
    await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
    expect(primary.requests).toHaveLength(1);

    await harness.prisma.channel.update({ where: { id: first.id }, data: { status: 2 } });
    const published = Date.now();
    await harness.redis.publish(`${redisPrefix()}${CACHE_INVALIDATION_CHANNEL}`, JSON.stringify({ kind: 'channels' }));
    await eventually(async () => {
      await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
      expect(backup.requests.length).toBeGreaterThanOrEqual(1);
    }, 2_000);
    expect(Date.now() - published).toBeLessThan(2_000);
    const primaryCount = primary.requests.length;
    for (let i = 0; i < 3; i++) await client.completions.create({ model: MODEL, prompt: [1], max_tokens: 1 });
    expect(primary.requests).toHaveLength(primaryCount);
  });

  it("carries each channel's settings (docs/api.md 3.3); settings that do not suit the type count as none", async () => {
    const chat = await openAiChannel(harness.prisma, primary.url, { settings: { responses: 'chat' }, priority: 10 });
    const handEdited = await openAiChannel(harness.prisma, backup.url, { settings: { responses: 'sometimes' } });
    await harness.reloadCaches();
    const plan = harness.relay.channels.plan('completions', 'default', MODEL);
    const records = [plan.next(), plan.next()];
    expect(records.map((record) => [record?.id, record?.settings])).toEqual([[chat.id, { responses: 'chat' }], [handEdited.id, {}]]);
  });
});
