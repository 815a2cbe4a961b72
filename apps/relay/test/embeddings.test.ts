// docs/api.md 2.8: `POST /v1/embeddings` through the openai SDK, passed through to an OpenAI-compatible
// channel and sent to a Gemini channel as batchEmbedContents; charged on prompt tokens.
import type { ChannelType } from '@modelgate/schemas';
import { createChannel } from '@modelgate/testing';
import { DEFAULT_EMBEDDING_DIMENSIONS, fakeEmbedding } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { expectKeyNotForwarded, GEMINI, OPENAI, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

const EMBEDDING_CHANNELS: Record<typeof OPENAI | typeof GEMINI, { model: string; key: string }> = {
  [OPENAI]: { model: 'text-embedding-3-small', key: 'sk-upstream-openai-secret' },
  [GEMINI]: { model: 'gemini-embedding-001', key: 'gemini-upstream-channel-secret' },
};
const INPUTS = ['The quick brown fox', 'dog'];
/** One token per word at the OpenAI fake; the relay's own count (o200k) for Gemini, which reports none. */
const PROMPT_TOKENS = 5;

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma, Object.values(EMBEDDING_CHANNELS).map((channel) => channel.model));
  for (const [type, { model, key }] of Object.entries(EMBEDDING_CHANNELS)) {
    await createChannel(harness.prisma, { type: Number(type) as ChannelType, baseUrl: upstream.url, models: model, key });
  }
  await harness.reloadCaches();
});

describe.each([['OpenAI-compatible (1)', OPENAI], ['Gemini (24)', GEMINI]] as const)('embeddings on a %s channel', (_name, type) => {
  const { model, key } = EMBEDDING_CHANNELS[type];

  it.each([['float', 'float'], ['base64 (the SDK default, decoded by it)', undefined]] as const)(
    '%s: one vector per input, in order, usage billed',
    async (_format, encodingFormat) => {
      const customer = await createCustomer(harness.prisma);
      const response = await openAiClient(harness, customer.key).embeddings.create({
        model,
        input: INPUTS,
        ...(encodingFormat ? { encoding_format: encodingFormat } : {}),
      });
      expect(response).toMatchObject({ object: 'list', model, usage: { prompt_tokens: PROMPT_TOKENS, total_tokens: PROMPT_TOKENS } });
      expect(response.data.map((item) => item.index)).toEqual([0, 1]);
      expect(response.data.map((item) => item.embedding)).toEqual(INPUTS.map((text) => fakeEmbedding(text, DEFAULT_EMBEDDING_DIMENSIONS)));

      const request = recorded(upstream.requests);
      expectKeyNotForwarded(request, customer.key);
      if (type === OPENAI) {
        expect(request.path).toBe('/v1/embeddings');
        expect(request.headers.authorization).toBe(`Bearer ${key}`);
        expect(request.json).toEqual({ model, input: INPUTS, encoding_format: encodingFormat ?? 'base64' });
      } else {
        expect(request.path).toBe(`/v1beta/models/${model}:batchEmbedContents`);
        expect(request.headers['x-goog-api-key']).toBe(key);
        expect(request.json).toEqual({ requests: INPUTS.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] } })) });
      }
      expect(await settledConsumeRow(harness)).toMatchObject({ modelName: model, promptTokens: PROMPT_TOKENS, completionTokens: 0, quota: BigInt(-PROMPT_TOKENS) });
      await expectLedgerInvariant(harness.prisma);
    },
  );

  it('passes dimensions on', async () => {
    const customer = await createCustomer(harness.prisma);
    const response = await openAiClient(harness, customer.key).embeddings.create({ model, input: 'jumps', dimensions: 4, encoding_format: 'float' });
    expect(response.data).toEqual([{ object: 'embedding', index: 0, embedding: fakeEmbedding('jumps', 4) }]);
    const sent = recorded(upstream.requests).json;
    if (type === OPENAI) expect(sent).toMatchObject({ dimensions: 4 });
    else expect(sent).toMatchObject({ requests: [{ outputDimensionality: 4 }] });
  });
});

describe('token-id input', () => {
  it('is embedded by an OpenAI-compatible channel', async () => {
    const customer = await createCustomer(harness.prisma);
    const response = await openAiClient(harness, customer.key).embeddings.create({ model: EMBEDDING_CHANNELS[OPENAI].model, input: [[1, 2, 3]], encoding_format: 'float' });
    expect(response.usage.prompt_tokens).toBe(3);
  });

  it('is refused for a Gemini channel with 400 naming input, and nothing is charged', async () => {
    const customer = await createCustomer(harness.prisma);
    const failure = await openAiClient(harness, customer.key)
      .embeddings.create({ model: EMBEDDING_CHANNELS[GEMINI].model, input: [[1, 2, 3]] })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, param: 'input', type: 'invalid_request_error', code: 'invalid_request' });
    expect(upstream.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);
    await expectLedgerInvariant(harness.prisma);
  });
});
