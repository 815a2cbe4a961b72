// docs/api.md 2.9 and 2.11: `POST /v1/messages` and `/v1/messages/count_tokens` through the real
// relay with the official Anthropic SDK, on Anthropic channels: the client's bytes and protocol
// headers reach the channel untouched (thinking signatures survive the round trip), answers come
// back as the channel sent them, usage (cache reads and writes included) is billed per 2.11.
import type Anthropic from '@anthropic-ai/sdk';
import { FAKE_TEXT_PIECE, FAKE_THOUGHT, FAKE_TOOL_ARGUMENTS } from '@modelgate/testing/fake-upstream';
import { ANTHROPIC_VERSION } from '@modelgate/schemas';
import { createChannel } from '@modelgate/testing';
import { countPromptTextTokens } from '../src/features/relay/tokens';
import { expectKeyNotForwarded, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import {
  ANTHROPIC,
  anthropicClient,
  chargeOf,
  MESSAGES_CHANNELS,
  modelOf,
  OPENAI,
  postMessages,
  type SentRequest,
  sseEvents,
  UNMAPPED_MODEL,
  withMessagesChannels,
} from './messages-support';

const MODEL = modelOf(ANTHROPIC);
const { upstreamModel: UPSTREAM_MODEL, key: CHANNEL_KEY } = MESSAGES_CHANNELS[ANTHROPIC];
const SYSTEM = 'Be brief.';
const QUESTION = 'Say hello to me';
/** The fake counts one token per word: 2 + 4. */
const PROMPT_TOKENS = 6;
const ANSWER = FAKE_TEXT_PIECE.repeat(5);
const BETAS = 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';

const WEATHER_TOOL: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withMessagesChannels([ANTHROPIC, OPENAI]);
});

async function customer(options: Parameters<typeof anthropicClient>[2] = {}) {
  const { key, userId } = await createCustomer(harness.prisma);
  return { key, userId, client: anthropicClient(harness, key, options) };
}

const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

describe('an Anthropic channel (pass-through)', () => {
  it.each([
    ['apiKey', false],
    ['authToken (Authorization: Bearer)', true],
  ])('answers the SDK with %s as the channel answered, under the model the client asked for', async (_name, bearer) => {
    const sent: SentRequest[] = [];
    const { key, client } = await customer({ bearer, sent });
    const message = await client.messages.create({ model: MODEL, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user', content: QUESTION }] });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn' });
    expect(textOf(message)).toBe(ANSWER);
    expect(message.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: 5, cache_read_input_tokens: 0 });

    const request = recorded(upstream.requests);
    expect(request.url).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe(CHANNEL_KEY);
    expect(request.headers.authorization).toBeUndefined();
    // The SDK's own version, passed on.
    expect(request.headers['anthropic-version']).toBe(sent[0]?.version);
    expect(request.json).toEqual({ model: UPSTREAM_MODEL, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user', content: QUESTION }] });
    expectKeyNotForwarded(request, key);

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ modelName: MODEL, promptTokens: PROMPT_TOKENS, completionTokens: 5, isStream: false });
    expect(row.quota).toBe(BigInt(-chargeOf({ prompt: PROMPT_TOKENS, completion: 5 })));
    await expectLedgerInvariant(harness.prisma);
  });

  it('takes the key from x-api-key, ignores query strings, and forwards neither', async () => {
    const { key } = await createCustomer(harness.prisma);
    const { status, json } = await postMessages('/v1/messages?beta=true&key=nonsense', { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, {
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: QUESTION }],
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ type: 'message', model: MODEL });
    const request = recorded(upstream.requests);
    expect(request.url).toBe('/v1/messages');
    expectKeyNotForwarded(request, key);
  });

  it('serves client.beta.messages.create (?beta=true) and passes anthropic-beta and the client anthropic-version on', async () => {
    const { client } = await customer({ headers: { 'anthropic-version': '2025-01-01' } });
    const message = await client.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: QUESTION }],
      betas: BETAS.split(','),
    });
    expect(textOf(message as Anthropic.Message)).toBe(ANSWER);
    const request = recorded(upstream.requests);
    expect(request.url).toBe('/v1/messages');
    expect(request.headers['anthropic-beta']).toBe(BETAS);
    expect(request.headers['anthropic-version']).toBe('2025-01-01');
  });

  it(`sends anthropic-version ${ANTHROPIC_VERSION} when the client sent none, and no anthropic-beta`, async () => {
    const { key } = await createCustomer(harness.prisma);
    const { status } = await postMessages('/v1/messages', { authorization: `Bearer ${key}` }, { model: MODEL, max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] });
    expect(status).toBe(200);
    const request = recorded(upstream.requests);
    expect(request.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(request.headers['anthropic-beta']).toBeUndefined();
  });

  it('streams the events as the channel sent them, message_start showing the model asked for', async () => {
    const { key, client } = await customer();
    const stream = client.messages.stream({ model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: QUESTION }] });
    const message = await stream.finalMessage();
    expect(message).toMatchObject({ model: MODEL, stop_reason: 'end_turn', usage: { input_tokens: 4, output_tokens: 5 } });
    expect(textOf(message)).toBe(ANSWER);

    // The wire: Anthropic's event sequence, event by event.
    const { text } = await postMessages('/v1/messages', { 'x-api-key': key }, { model: MODEL, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: QUESTION }] });
    const events = sseEvents(text);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...Array<string>(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]?.data).toMatchObject({ type: 'message_start', message: { model: MODEL } });
    expect(recorded(upstream.requests, 1).json).toMatchObject({ model: UPSTREAM_MODEL, stream: true });

    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens])).toEqual([[true, 4, 5], [true, 4, 5]]);
  });

  it('leaves the model of an unmapped channel as the channel wrote it, and the whole body as the client wrote it', async () => {
    const sent: SentRequest[] = [];
    const { client } = await customer({ sent });
    const message = await client.messages.create({ model: UNMAPPED_MODEL, max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] });
    expect(message.model).toBe(UNMAPPED_MODEL);
    expect(recorded(upstream.requests).body.toString('utf8')).toBe(sent[0]?.body);
  });

  describe.each([
    ['whole', false],
    ['streamed', true],
  ])('thinking and a tool call (%s)', (_name, stream) => {
    /** Turn 1 asks for thinking and a tool; turn 2 sends the answer's blocks back with the tool's result. */
    async function roundTrip(model: string, sent: SentRequest[], client: Anthropic) {
      const params: Anthropic.MessageCreateParamsNonStreaming = {
        model,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      };
      const first = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      const [thinking, toolUse] = first.content;
      expect(thinking).toEqual({ type: 'thinking', thinking: FAKE_THOUGHT, signature: expect.stringMatching(/^sig-fake-\d+$/) });
      expect(toolUse).toEqual({ type: 'tool_use', id: expect.stringMatching(/^toolu_fake\d+$/), name: 'get_weather', input: FAKE_TOOL_ARGUMENTS });
      expect(first.stop_reason).toBe('tool_use');
      if (!toolUse || toolUse.type !== 'tool_use') throw new Error('no tool call');

      // The blocks go back as the SDK serialises them (streamed tool_use blocks may carry extra fields).
      const assistant = first.content;
      const second = await client.messages.create({
        ...params,
        messages: [
          ...params.messages,
          { role: 'assistant', content: assistant },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18 degrees and sunny' }] },
        ],
      });
      expect(textOf(second)).toBe(ANSWER);
      const request = recorded(upstream.requests, 1);
      const received = request.body.toString('utf8');
      // Every block of the assistant turn arrives byte for byte, the signature included.
      for (const block of assistant) expect(received).toContain(JSON.stringify(block));
      expect((request.json.messages as { content: unknown }[])[1]?.content).toEqual(JSON.parse(JSON.stringify(assistant)));
      return { sentBody: sent[1]?.body, received };
    }

    it('round-trips the signed thinking block and the tool_use byte for byte (renamed model: one re-serialisation)', async () => {
      const sent: SentRequest[] = [];
      const { client } = await customer({ sent });
      await roundTrip(MODEL, sent, client);
      expect(recorded(upstream.requests, 1).json.model).toBe(UPSTREAM_MODEL);
    });

    it('passes the whole next turn as the client sent it when the channel does not rename the model', async () => {
      const sent: SentRequest[] = [];
      const { client } = await customer({ sent });
      const { sentBody, received } = await roundTrip(UNMAPPED_MODEL, sent, client);
      expect(received).toBe(sentBody);
    });
  });
});

describe('usage on an Anthropic channel (docs/api.md 2.11)', () => {
  const CACHED = 800;
  const CACHE_WRITE = 150;

  it.each([
    ['whole', false],
    ['streamed', true],
  ])('bills cache reads and writes apart (%s), every count on the consume row', async (_name, stream) => {
    upstream.setMode('ok', { cachedTokens: CACHED, cacheWriteTokens: CACHE_WRITE });
    const { client } = await customer();
    const params = { model: MODEL, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };
    const message = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    // What the channel reported, as Anthropic reports it: input_tokens without the cache's.
    expect(message.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, cache_read_input_tokens: CACHED, cache_creation_input_tokens: CACHE_WRITE, output_tokens: 5 });

    const prompt = PROMPT_TOKENS + CACHED + CACHE_WRITE;
    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ promptTokens: prompt, completionTokens: 5, isStream: stream });
    expect(row.other).toMatchObject({ cache_tokens: CACHED, cache_creation_tokens: CACHE_WRITE, cache_ratio: 0.1, cache_creation_ratio: 1.25, model_ratio: 1.5, completion_ratio: 5 });
    expect(row.quota).toBe(BigInt(-chargeOf({ prompt, completion: 5, cached: CACHED, cacheWrite: CACHE_WRITE })));
    await expectLedgerInvariant(harness.prisma);
  });

  it.each([
    ['whole', false],
    ['streamed', true],
  ])('counts the prompt and the delivered text when the channel reports no usage (%s)', async (_name, stream) => {
    upstream.setMode('noUsage');
    const { key } = await createCustomer(harness.prisma);
    // Passed through as the channel sent it: without usage (which the SDK's stream helper requires).
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, {
      model: MODEL,
      max_tokens: 1024,
      stream,
      system: SYSTEM,
      messages: [{ role: 'user', content: QUESTION }],
    });
    expect(status).toBe(200);
    expect(text).not.toContain('usage');
    expect(text).toContain(FAKE_TEXT_PIECE);
    const row = await settledConsumeRow(harness);
    expect(row.promptTokens).toBe(countPromptTextTokens(`${SYSTEM}\n${QUESTION}`));
    expect(row.completionTokens).toBe(5);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  const PARAMS = { system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };

  it('is answered natively by an Anthropic channel (renamed model, client headers), and charges nothing', async () => {
    const { client, userId } = await customer({ headers: { 'anthropic-beta': BETAS, 'anthropic-version': '2025-01-01' } });
    const count = await client.messages.countTokens({ model: MODEL, ...PARAMS });
    expect(count).toEqual({ input_tokens: PROMPT_TOKENS });
    const request = recorded(upstream.requests);
    expect(request.url).toBe('/v1/messages/count_tokens');
    expect(request.json).toEqual({ model: UPSTREAM_MODEL, ...PARAMS });
    expect(request.headers).toMatchObject({ 'x-api-key': CHANNEL_KEY, 'anthropic-beta': BETAS, 'anthropic-version': '2025-01-01' });

    expect(await settledConsumeRows(harness)).toEqual([]);
    expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } })).quota).toBe(1_000_000n);
  });

  it('is estimated by the relay on an OpenAI channel (its prompt count as charged), without an upstream call', async () => {
    const { client } = await customer();
    const count = await client.beta.messages.countTokens({ model: modelOf(OPENAI), ...PARAMS });
    expect(count).toEqual({ input_tokens: countPromptTextTokens(`${SYSTEM}\n${QUESTION}`) });
    expect(upstream.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);
  });

  it('needs no balance: a user at 0 quota may count, not call', async () => {
    const { key } = await createCustomer(harness.prisma, { quota: 0 });
    const client = anthropicClient(harness, key);
    expect(await client.messages.countTokens({ model: MODEL, ...PARAMS })).toEqual({ input_tokens: PROMPT_TOKENS });
    await expect(client.messages.create({ model: MODEL, max_tokens: 10, ...PARAMS })).rejects.toMatchObject({ status: 403 });
  });

  it('needs no price: an unpriced model may be counted, not called', async () => {
    await createChannel(harness.prisma, { type: ANTHROPIC, baseUrl: upstream.url, key: CHANNEL_KEY, models: 'claude-unpriced' });
    await harness.reloadCaches();
    const { client } = await customer();
    expect(await client.messages.countTokens({ model: 'claude-unpriced', ...PARAMS })).toEqual({ input_tokens: PROMPT_TOKENS });
    await expect(client.messages.create({ model: 'claude-unpriced', max_tokens: 10, ...PARAMS })).rejects.toMatchObject({ status: 400 });
  });
});
