// docs/api.md 2.13, 2.14: `POST /v1/moderations` (openai SDK) and `POST /v1/rerank` (Jina's and
// Cohere's request shapes, by plain fetch), passed through to OpenAI-compatible channels only.
// Moderations are free unless ModelPrice names the model; a rerank is priced per request, or by the
// tokens it reported where the model has a ModelRatio.
import { createChannel, setOption } from '@modelgate/testing';
import { FAKE_FLAGGED_WORD, MODERATION_CATEGORIES } from '@modelgate/testing/fake-upstream';
import { expectKeyNotForwarded, recorded, settledConsumeRow } from './chat-support';
import { expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import { AZURE, expectTokensCharged, expectUnitCharged, MEDIA_CHANNELS, mediaCustomer, OPENAI, postJson, setMediaPrices, START_QUOTA, USD_PER_UNIT } from './media-support';

const MODERATION_MODEL = 'omni-moderation-latest';
const COHERE_MODEL = 'rerank-v3.5';
const JINA_MODEL = 'jina-reranker-v2-base-multilingual';
/** The channel's names for them. */
const UPSTREAM_MODELS = {
  [MODERATION_MODEL]: 'omni-moderation-2024-09-26',
  [COHERE_MODEL]: 'cohere/rerank-v3.5',
  [JINA_MODEL]: 'jina/jina-reranker-v2-base-multilingual',
};
const CHANNEL_KEY = 'sk-upstream-rerank-secret';

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setMediaPrices();
  await createChannel(harness.prisma, {
    type: OPENAI,
    baseUrl: upstream.url,
    key: CHANNEL_KEY,
    models: Object.keys(UPSTREAM_MODELS).join(','),
    modelMapping: JSON.stringify(UPSTREAM_MODELS),
  });
  await harness.reloadCaches();
});

/** The call reached the channel at `path` with its key and the client's body under the channel's model name. */
function expectPassedThrough(path: string, clientKey: string, body: Record<string, unknown>) {
  const request = recorded(upstream.requests);
  expect(request.url).toBe(path);
  expect(request.headers.authorization).toBe(`Bearer ${CHANNEL_KEY}`);
  expectKeyNotForwarded(request, clientKey);
  expect(request.json).toEqual({ ...body, model: UPSTREAM_MODELS[body.model as keyof typeof UPSTREAM_MODELS] });
}

describe('moderations', () => {
  it('are passed through, answered with the model asked for, and free: a consume row of 0', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const answer = await openai.moderations.create({ model: MODERATION_MODEL, input: `I will ${FAKE_FLAGGED_WORD} the process` });
    expect(answer.model).toBe(MODERATION_MODEL);
    expect(answer.results).toHaveLength(1);
    expect(answer.results[0]).toMatchObject({ flagged: true, categories: { violence: true, hate: false }, category_scores: { violence: 0.9 } });
    expect(Object.keys(answer.results[0]?.categories ?? {}).sort()).toEqual([...MODERATION_CATEGORIES].sort());
    expectPassedThrough('/v1/moderations', key, { model: MODERATION_MODEL, input: `I will ${FAKE_FLAGGED_WORD} the process` });

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ modelName: MODERATION_MODEL, quota: 0n, promptTokens: 0, completionTokens: 0 });
    expect(row.other).toMatchObject({ requests: 1 });
    expect(row.other).not.toHaveProperty('usd_per_unit');
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
    expect(user.quota).toBe(BigInt(START_QUOTA));
    await expectLedgerInvariant(harness.prisma);
  });

  it('without a model go to OpenAI’s default, one result per text of a multimodal input', async () => {
    const { openai } = await mediaCustomer();
    const answer = await openai.moderations.create({
      input: [
        { type: 'text', text: 'a quiet afternoon' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        { type: 'text', text: `${FAKE_FLAGGED_WORD} it` },
      ],
    });
    expect(answer.model).toBe(MODERATION_MODEL);
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true]);
    expect(recorded(upstream.requests).json).toMatchObject({ model: UPSTREAM_MODELS[MODERATION_MODEL] });
  });

  it('are charged per request where ModelPrice names the model', async () => {
    const usdPerRequest = 0.0001;
    await setOption(harness.prisma, 'ModelPrice', { ...USD_PER_UNIT, [MODERATION_MODEL]: usdPerRequest });
    await harness.reloadCaches();
    const { userId, openai } = await mediaCustomer();
    await openai.moderations.create({ model: MODERATION_MODEL, input: 'hello' });
    await expectUnitCharged(userId, START_QUOTA, { model: MODERATION_MODEL, usdPerUnit: usdPerRequest, units: 1, unit: 'request', billed: { requests: 1 } });
  });
});

const QUERY = 'best cat food';
const DOCUMENTS = ['dog toys', 'cat food brands', 'the best cat food'];

describe('rerank', () => {
  it("in Cohere's shape: the documents by relevance, charged per request", async () => {
    const { key, userId } = await mediaCustomer();
    const body = { model: COHERE_MODEL, query: QUERY, documents: DOCUMENTS.map((text) => ({ text })), top_n: 2 };
    const { status, answer } = await postJson(key, '/v1/rerank', body);
    expect(status).toBe(200);
    expect(answer.results).toEqual([
      { index: 2, relevance_score: 1, document: { text: DOCUMENTS[2] } },
      { index: 1, relevance_score: 2 / 3, document: { text: DOCUMENTS[1] } },
    ]);
    expectPassedThrough('/v1/rerank', key, body);
    await expectUnitCharged(userId, START_QUOTA, { model: COHERE_MODEL, usdPerUnit: USD_PER_UNIT[COHERE_MODEL], units: 1, unit: 'request', billed: { requests: 1 } });
  });

  it("in Jina's shape: answered with the model asked for, charged the tokens it reported", async () => {
    const { key, userId } = await mediaCustomer();
    const body = { model: JINA_MODEL, query: QUERY, documents: DOCUMENTS, return_documents: false };
    const { status, answer } = await postJson(key, '/v1/rerank', body);
    expect(status).toBe(200);
    // The fake reads one token per word of the query and of every document.
    const tokens = 3 + 2 + 3 + 4;
    expect(answer).toEqual({
      model: JINA_MODEL,
      results: [
        { index: 2, relevance_score: 1 },
        { index: 1, relevance_score: 2 / 3 },
        { index: 0, relevance_score: 0 },
      ],
      usage: { total_tokens: tokens },
    });
    expectPassedThrough('/v1/rerank', key, body);
    await expectTokensCharged(userId, START_QUOTA, { model: JINA_MODEL, prompt: tokens, completion: 0, billed: { requests: 1 } });
  });
});

describe('on an Azure channel', () => {
  beforeEach(async () => {
    await harness.prisma.channel.deleteMany();
    await createChannel(harness.prisma, { type: AZURE, baseUrl: upstream.url, key: MEDIA_CHANNELS[AZURE].key, models: `${MODERATION_MODEL},${COHERE_MODEL}` });
    await harness.reloadCaches();
  });

  it.each([
    ['/v1/moderations', { model: MODERATION_MODEL, input: 'hello' }],
    ['/v1/rerank', { model: COHERE_MODEL, query: QUERY, documents: DOCUMENTS }],
  ])('%s is not served: 404 model_not_found, nothing asked upstream', async (path, body) => {
    const { key } = await mediaCustomer();
    const { status, answer } = await postJson(key, path, body);
    expect(status).toBe(404);
    expect(answer).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'model_not_found' } });
    expect(upstream.requests).toEqual([]);
  });
});
