// docs/api.md 2.11: cached and cache-write prompt tokens are priced apart, and the consume row keeps
// every token count its charge was computed from. The shared fake upstream reports no cached tokens,
// so a provider stand-in here does.
import { consumeContentOf, consumeOtherView } from '@modelgate/schemas';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChannel, redisPrefix, setOption } from '@modelgate/testing';
import type { LedgerEntry } from '../src/features/billing/ledger-entry';
import { consumeLogs, createCustomer, expectLedgerInvariant, harness, ledgerEntry, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite } from './harness';

const GEMINI_MODEL = 'gemini-2.5-flash';

/** OpenAI usage with 800 of 1000 prompt tokens cached and 30 of 100 completion tokens spent reasoning. */
const OPENAI_USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 100,
  total_tokens: 1100,
  prompt_tokens_details: { cached_tokens: 800 },
  completion_tokens_details: { reasoning_tokens: 30 },
};

/** Gemini usage: 600 of 1000 prompt tokens from the context cache, 40 thought + 60 candidate tokens. */
const GEMINI_USAGE = {
  promptTokenCount: 1000,
  cachedContentTokenCount: 600,
  candidatesTokenCount: 60,
  thoughtsTokenCount: 40,
  totalTokenCount: 1100,
};

/** A provider that reports cached and reasoning tokens: OpenAI completions (whole and streamed) and Gemini. */
async function startCachingUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { stream?: boolean };
      if (req.url?.includes(':generateContent')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({
          candidates: [{ content: { role: 'model', parts: [{ text: 'cached' }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: GEMINI_USAGE,
        }));
        return;
      }
      const completion = { id: 'cmpl-cached', object: 'text_completion', created: 1, model: MODEL };
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...completion, choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }], usage: OPENAI_USAGE }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ ...completion, choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...completion, choices: [], usage: OPENAI_USAGE })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

relaySuite();
let caching: { url: string; server: Server };

beforeAll(async () => {
  caching = await startCachingUpstream();
});

afterAll(() => new Promise((resolve) => caching.server.close(resolve)));

beforeEach(async () => {
  await resetSuite();
  await setOption(harness.prisma, 'ModelRatio', { [MODEL]: 0.5, [GEMINI_MODEL]: 0.5 });
  await setOption(harness.prisma, 'CompletionRatio', { [MODEL]: 4, [GEMINI_MODEL]: 4 });
  await setOption(harness.prisma, 'CacheRatio', { [MODEL]: 0.25, [GEMINI_MODEL]: 0.1 });
  await setOption(harness.prisma, 'GroupRatio', { default: 1, vip: 2 });
  await openAiChannel(harness.prisma, caching.url, { groups: 'default,vip' });
  await createChannel(harness.prisma, { type: 24, baseUrl: caching.url, models: GEMINI_MODEL, key: 'gemini-key' });
  await harness.reloadCaches();
});

/** The billing keys of a consume row's `other` (docs/api.md 2.11, new-api's names). */
function cacheFieldsOf(other: unknown) {
  const { cache_tokens, cache_creation_tokens, reasoning_tokens, cache_ratio, cache_creation_ratio } = consumeOtherView(other as Record<string, unknown>);
  return { cache_tokens, cache_creation_tokens, reasoning_tokens, cache_ratio, cache_creation_ratio };
}

describe('cached prompt tokens', () => {
  it.each([false, true])('are charged at CacheRatio on /v1/completions (stream: %s) and kept on the consume row', async (stream) => {
    const customer = await createCustomer(harness.prisma, { quota: 10_000 });
    const client = openAiClient(harness, customer.key);
    if (stream) {
      const chunks = await client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 100, stream: true, stream_options: { include_usage: true } });
      const usages = [];
      for await (const chunk of chunks) if (chunk.usage) usages.push(chunk.usage);
      expect(usages).toEqual([expect.objectContaining({ prompt_tokens_details: expect.objectContaining({ cached_tokens: 800 }) })]);
    } else {
      const completion = await client.completions.create({ model: MODEL, prompt: 'hi', max_tokens: 100 });
      expect(completion.usage).toMatchObject(OPENAI_USAGE);
    }
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    // ((1000 - 800) + 800 x 0.25 + 100 x 4) x 0.5 = 400, where the pre-2.11 charge was 700.
    expect(log).toMatchObject({ promptTokens: 1000, completionTokens: 100, quota: -400n });
    expect(cacheFieldsOf(log?.other)).toEqual({ cache_tokens: 800, cache_creation_tokens: 0, reasoning_tokens: 30, cache_ratio: 0.25, cache_creation_ratio: 1 });
    expect(log?.other).toMatchObject({ model_ratio: 0.5, completion_ratio: 4, group_ratio: 1 });
    expect(consumeContentOf(log?.other as Record<string, unknown>)).toBe('model ratio 0.5, completion ratio 4, group ratio 1, cache ratio 0.25');
    await expectLedgerInvariant(harness.prisma);
  });

  it("multiply by the key group's GroupRatio like every other token", async () => {
    const customer = await createCustomer(harness.prisma, { quota: 10_000, group: 'vip' });
    await openAiClient(harness, customer.key).completions.create({ model: MODEL, prompt: 'hi', max_tokens: 100 });
    await harness.relay.ledger.flush();
    expect((await consumeLogs(harness.prisma)).map((log) => log.quota)).toEqual([-800n]);
    await expectLedgerInvariant(harness.prisma);
  });

  it('from Gemini cachedContentTokenCount are charged at CacheRatio; thoughts are output tokens, kept as reasoning tokens', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 10_000 });
    const response = await fetch(`${harness.url}/v1beta/models/${GEMINI_MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': customer.key, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ usageMetadata: GEMINI_USAGE });
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    // ((1000 - 600) + 600 x 0.1 + (60 + 40) x 4) x 0.5 = 430
    expect(log).toMatchObject({ promptTokens: 1000, completionTokens: 100, quota: -430n });
    expect(cacheFieldsOf(log?.other)).toEqual({ cache_tokens: 600, cache_creation_tokens: 0, reasoning_tokens: 40, cache_ratio: 0.1, cache_creation_ratio: 1 });
  });
});

describe('the ledger', () => {
  it('keeps the cache-write tokens and ratios of a settled entry', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 10_000 });
    const channel = await harness.prisma.channel.findFirstOrThrow();
    // (1000 - 100 - 800) + 100 x 0.1 + 800 x 1.25 + 10 = 1120
    const entry = ledgerEntry(customer, channel.id, {
      model: 'claude-sonnet-4-5',
      quota: 1_120,
      promptTokens: 1_000,
      cachedTokens: 100,
      cacheWriteTokens: 800,
      completionTokens: 10,
      cacheRatio: 0.1,
      cacheCreationRatio: 1.25,
    });
    await harness.redis.hincrby(`${redisPrefix()}bal:u:${customer.userId}`, 'pending', entry.quota);
    await harness.redis.rpush(`${redisPrefix()}ledger:queue`, JSON.stringify(entry));
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ modelName: 'claude-sonnet-4-5', quota: -1_120n });
    expect(cacheFieldsOf(log?.other)).toEqual({ cache_tokens: 100, cache_creation_tokens: 800, reasoning_tokens: 0, cache_ratio: 0.1, cache_creation_ratio: 1.25 });
    expect(consumeContentOf(log?.other as Record<string, unknown>)).toBe('model ratio 1, completion ratio 1, group ratio 1, cache ratio 0.1, cache creation ratio 1.25');
    await expectLedgerInvariant(harness.prisma);
  });

  it('writes an entry queued by a relay from before cache pricing (no cache fields) with zero cache tokens', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 10_000 });
    const channel = await harness.prisma.channel.findFirstOrThrow();
    const queued: Partial<LedgerEntry> = ledgerEntry(customer, channel.id);
    for (const field of ['cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'cacheRatio', 'cacheCreationRatio'] as const) delete queued[field];
    await harness.redis.hincrby(`${redisPrefix()}bal:u:${customer.userId}`, 'pending', 40);
    await harness.redis.rpush(`${redisPrefix()}ledger:queue`, JSON.stringify(queued));
    await harness.relay.ledger.flush();
    const [log] = await consumeLogs(harness.prisma);
    expect(log).toMatchObject({ quota: -40n, promptTokens: 20, completionTokens: 20 });
    expect(cacheFieldsOf(log?.other)).toEqual({ cache_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0, cache_ratio: 1, cache_creation_ratio: 1 });
    expect(await harness.redis.llen(`${redisPrefix()}ledger:queue`)).toBe(0);
    await expectLedgerInvariant(harness.prisma);
  });
});
