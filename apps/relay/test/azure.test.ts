// docs/api.md 2.12: Azure OpenAI channels (type 3) through the real relay, with the official SDKs as
// clients. OpenAI's surfaces pass through to the resource's deployment routes (Responses to the v1
// API), Messages is translated through chat; the resource key goes in `api-key`; Azure's filter
// fields and its content filter refusal reach the client; a refused key disables the channel.
import Anthropic from '@anthropic-ai/sdk';
import { createLogger } from '@modelgate/logger';
import { AZURE_API_VERSION, CHANNEL_TYPE } from '@modelgate/schemas';
import { type ChannelOverrides, createChannel } from '@modelgate/testing';
import { DEFAULT_EMBEDDING_DIMENSIONS, FAKE_TEXT_PIECE, FAKE_THOUGHT, FAKE_TOOL_ARGUMENTS, fakeEmbedding, MEDIA_PART_TOKENS } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { expectKeyNotForwarded, fullUsage, postForEvents, readChatStream, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { backup, createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';
import { anthropicClient, postMessages, sseEvents } from './messages-support';
import { responsesUsage, streamResponse } from './responses-support';

const AZURE = CHANNEL_TYPE.azure;
const KEY = 'azure-resource-key-SECRET-5e1f0a9b2c7d';
/** Client model -> the deployment that serves it on the resource. */
const DEPLOYMENTS = {
  'gpt-4o': 'gpt-4o-prod',
  'gpt-35-turbo-instruct': 'instruct prod',
  'text-embedding-3-small': 'embed-prod',
  'gpt-5': 'gpt-5-prod',
} as const;
const CHAT_MODEL = 'gpt-4o';
const CHAT_PATH = `/openai/deployments/gpt-4o-prod/chat/completions?api-version=${AZURE_API_VERSION}`;

const SYSTEM = 'Be brief.';
const QUESTION = 'Say hello to me';
const MESSAGES: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: QUESTION },
];
/** The fakes count one token per word: 2 + 4. */
const PROMPT_TOKENS = 6;
const ANSWER = FAKE_TEXT_PIECE.repeat(5);
const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

const logLines: string[] = [];
relaySuite({}, {
  upstreams: 2,
  logger: createLogger({ service: 'relay', level: 'trace', destination: { write: (line: string) => logLines.push(line) } }),
});

/** An Azure channel on a fake upstream serving every test model through its deployment. */
function azureChannel(baseUrl: string, fields: ChannelOverrides = {}) {
  return createChannel(harness.prisma, {
    type: AZURE,
    baseUrl,
    key: KEY,
    models: Object.keys(DEPLOYMENTS).join(','),
    modelMapping: JSON.stringify(DEPLOYMENTS),
    ...fields,
  });
}

beforeEach(async () => {
  await resetSuite();
  logLines.length = 0;
  await setUnitPrices(harness.prisma, Object.keys(DEPLOYMENTS));
});

async function withAzureChannel(fields: ChannelOverrides = {}) {
  const channel = await azureChannel(upstream.url, fields);
  await harness.reloadCaches();
  return channel;
}

async function customer() {
  const { key, userId } = await createCustomer(harness.prisma);
  return { key, userId, openai: openAiClient(harness, key), anthropic: anthropicClient(harness, key) };
}

/** The call reached Azure with the resource key in `api-key` and nothing of the client's. */
function expectAzureAuth(index: number, clientKey: string) {
  const request = recorded(upstream.requests, index);
  expect(request.headers['api-key']).toBe(KEY);
  expect(request.headers.authorization).toBeUndefined();
  expect(request.cloud).toEqual({ model: expect.any(String), auth: 'api-key' });
  expectKeyNotForwarded(request, clientKey);
  return request;
}

describe('chat completions (passed through to the deployment)', () => {
  beforeEach(() => withAzureChannel());

  it('answers a plain call with the client model, Azure filter results, and bills the usage', async () => {
    const { key, userId, openai } = await customer();
    const completion = await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES });
    expect(completion).toMatchObject({ model: CHAT_MODEL, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: ANSWER } }] });
    expect(completion.usage).toMatchObject(fullUsage({ prompt: PROMPT_TOKENS, completion: 5 }));
    // Azure's own fields pass through.
    expect(completion).toHaveProperty('prompt_filter_results');
    expect(completion.choices[0]).toHaveProperty('content_filter_results');

    const request = expectAzureAuth(0, key);
    expect(request.url).toBe(CHAT_PATH);
    expect(request.json).toMatchObject({ model: 'gpt-4o-prod', messages: MESSAGES });
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: CHAT_MODEL, promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: false });
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
    expect(user.quota).toBe(1_000_000n - 11n);
    await expectLedgerInvariant(harness.prisma);
  });

  it("streams through Azure's prompt filter chunk (no choices, empty model) with the client model on every chunk", async () => {
    const { key, openai } = await customer();
    const streamed = await readChatStream(await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES, stream: true, stream_options: { include_usage: true } }));
    expect(streamed).toMatchObject({ content: ANSWER, finishReason: 'stop', toolCalls: [] });
    expect(streamed.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: 5 });
    expect(streamed.chunks[0]).toMatchObject({ choices: [], prompt_filter_results: expect.any(Array) });
    expect(streamed.chunks.every((chunk) => chunk.model === CHAT_MODEL)).toBe(true);

    const request = expectAzureAuth(0, key);
    expect(request.url).toBe(CHAT_PATH);
    expect(request.json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: true });
  });

  it('asks for usage upstream when the client did not, and still ends with [DONE]', async () => {
    const { key } = await customer();
    const { status, events } = await postForEvents(harness, '/v1/chat/completions', key, { model: CHAT_MODEL, messages: MESSAGES, stream: true });
    expect(status).toBe(200);
    expect(events.at(-1)).toBe('[DONE]');
    // No usage chunk: the client did not ask for one.
    for (const event of events.slice(0, -1)) expect((JSON.parse(event) as { usage?: unknown }).usage ?? null).toBeNull();
    expect(recorded(upstream.requests).json).toMatchObject({ stream_options: { include_usage: true } });
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 5 });
  });

  it.each([['plain', false], ['streaming', true]])('%s: a tool call round trip', async (_mode, stream) => {
    const { openai } = await customer();
    const ask = async (messages: OpenAI.ChatCompletionMessageParam[]) => {
      if (stream) return readChatStream(await openai.chat.completions.create({ model: CHAT_MODEL, messages, tools: [WEATHER_TOOL], stream: true }));
      const completion = await openai.chat.completions.create({ model: CHAT_MODEL, messages, tools: [WEATHER_TOOL] });
      const choice = completion.choices[0];
      const toolCalls = (choice?.message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [{ id: call.id, ...call.function }] : []));
      return { content: choice?.message.content ?? '', toolCalls, finishReason: choice?.finish_reason };
    };
    const first = await ask(MESSAGES);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toEqual([{ id: expect.stringMatching(/^call_fake\d+$/), name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) }]);
    const call = first.toolCalls[0]!;
    expect(recorded(upstream.requests, 0).json.tools).toEqual([WEATHER_TOOL]);

    const toolTurn: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' },
    ];
    const second = await ask([...MESSAGES, ...toolTurn]);
    expect(second).toMatchObject({ content: ANSWER, finishReason: 'stop', toolCalls: [] });
    expect(recorded(upstream.requests, 1).url).toBe(CHAT_PATH);
    expect((recorded(upstream.requests, 1).json.messages as unknown[]).slice(-2)).toEqual(toolTurn);
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => row.completionTokens)).toEqual([10, 5]);
  });
});

describe('the api-version', () => {
  it("is the channel's settings.api_version when it names one", async () => {
    await withAzureChannel({ settings: { api_version: '2025-04-01-preview' } });
    const { openai } = await customer();
    await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES });
    expect(recorded(upstream.requests).url).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview');
  });
});

describe('completions, embeddings and responses', () => {
  beforeEach(() => withAzureChannel());

  it('passes completions to the deployment (its name URL-encoded), plain and streamed', async () => {
    const { key, openai } = await customer();
    const completion = await openai.completions.create({ model: 'gpt-35-turbo-instruct', prompt: 'one two three', max_tokens: 5 });
    expect(completion).toMatchObject({ model: 'gpt-35-turbo-instruct', choices: [{ text: ANSWER }], usage: { prompt_tokens: 3, completion_tokens: 5 } });
    let streamed = '';
    for await (const chunk of await openai.completions.create({ model: 'gpt-35-turbo-instruct', prompt: 'one two three', max_tokens: 5, stream: true })) {
      expect(chunk.model).toBe('gpt-35-turbo-instruct');
      streamed += chunk.choices[0]?.text ?? '';
    }
    expect(streamed).toBe(ANSWER);

    for (const index of [0, 1]) {
      const request = expectAzureAuth(index, key);
      expect(request.url).toBe(`/openai/deployments/instruct%20prod/completions?api-version=${AZURE_API_VERSION}`);
      expect(request.cloud?.model).toBe('instruct prod');
    }
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens, row.quota])).toEqual([[false, 3, 5, -8n], [true, 3, 5, -8n]]);
  });

  it('passes embeddings to the deployment and bills their prompt tokens', async () => {
    const { key, openai } = await customer();
    const inputs = ['The quick brown fox', 'dog'];
    const response = await openai.embeddings.create({ model: 'text-embedding-3-small', input: inputs });
    expect(response).toMatchObject({ object: 'list', model: 'text-embedding-3-small', usage: { prompt_tokens: 5, total_tokens: 5 } });
    expect(response.data.map((item) => item.embedding)).toEqual(inputs.map((text) => fakeEmbedding(text, DEFAULT_EMBEDDING_DIMENSIONS)));

    const request = expectAzureAuth(0, key);
    expect(request.url).toBe(`/openai/deployments/embed-prod/embeddings?api-version=${AZURE_API_VERSION}`);
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: 'text-embedding-3-small', promptTokens: 5, completionTokens: 0, quota: -5n });
  });

  it('sends Responses to the v1 API with the deployment as model, plain and streamed', async () => {
    const { key, openai } = await customer();
    const body = { model: 'gpt-5', instructions: SYSTEM, input: QUESTION };
    const response = await openai.responses.create(body);
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-5' });
    expect(response.output_text).toBe(ANSWER);
    expect(response.usage).toEqual(responsesUsage({ input: PROMPT_TOKENS, output: 5 }));

    const { events, response: streamed } = await streamResponse(openai, body);
    expect(streamed).toMatchObject({ status: 'completed', model: 'gpt-5', output_text: ANSWER });
    expect(events.filter((event) => event.type === 'response.output_text.delta')).toHaveLength(5);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { usage: responsesUsage({ input: PROMPT_TOKENS, output: 5 }) } });

    for (const index of [0, 1]) {
      const request = expectAzureAuth(index, key);
      expect(request.url).toBe('/openai/v1/responses');
      expect(request.json).toMatchObject({ model: 'gpt-5-prod', instructions: SYSTEM, input: QUESTION });
    }
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens, row.quota])).toEqual([[false, 6, 5, -11n], [true, 6, 5, -11n]]);
  });
});

const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

describe('messages (translated through the deployment chat route)', () => {
  beforeEach(() => withAzureChannel());
  const params = { model: CHAT_MODEL, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };

  it('answers an Anthropic Message and bills the usage', async () => {
    const { key, anthropic } = await customer();
    const message = await anthropic.messages.create(params);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: CHAT_MODEL, stop_reason: 'end_turn', usage: { input_tokens: PROMPT_TOKENS, output_tokens: 5 } });
    expect(textOf(message)).toBe(ANSWER);

    const request = expectAzureAuth(0, key);
    expect(request.url).toBe(CHAT_PATH);
    expect(request.json).toMatchObject({ model: 'gpt-4o-prod', max_completion_tokens: 1024, messages: MESSAGES });
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: CHAT_MODEL, promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: false });
  });

  it("streams Anthropic's events from Azure's chunks, its prompt filter chunk skipped", async () => {
    const { key, anthropic } = await customer();
    const message = await anthropic.messages.stream(params).finalMessage();
    expect(message).toMatchObject({ model: CHAT_MODEL, stop_reason: 'end_turn', usage: { output_tokens: 5 } });
    expect(textOf(message)).toBe(ANSWER);
    expect(recorded(upstream.requests).json).toMatchObject({ stream: true, stream_options: { include_usage: true } });

    const { text } = await postMessages('/v1/messages', { 'x-api-key': key }, { ...params, stream: true });
    const names = sseEvents(text).map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((name) => name === 'content_block_delta')).toHaveLength(5);
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens])).toEqual([[true, 6, 5], [true, 6, 5]]);
  });

  it('sends an image block as an image_url data URL, billed at the tokens Azure reports', async () => {
    const { anthropic } = await customer();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const message = await anthropic.messages.create({
      model: CHAT_MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] }],
    });
    expect(textOf(message)).toBe(ANSWER);
    expect((recorded(upstream.requests).json.messages as { content: unknown }[])[0]?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    ]);
    // 3 words and one image part.
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: 3 + MEDIA_PART_TOKENS, completionTokens: 5 });
  });

  it('round-trips a streamed tool call and returns reasoning as a thinking block', async () => {
    const { anthropic } = await customer();
    const tool: Anthropic.Tool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
    // Claude Code's way of asking for reasoning: adaptive thinking at an effort.
    const first = { ...params, tools: [tool], thinking: { type: 'adaptive' as const }, output_config: { effort: 'high' as const } };
    const answer = await anthropic.messages.stream(first).finalMessage();
    expect(answer.stop_reason).toBe('tool_use');
    expect(answer.content[0]).toMatchObject({ type: 'thinking', thinking: FAKE_THOUGHT });
    const toolUse = answer.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: FAKE_TOOL_ARGUMENTS });

    const second = await anthropic.messages.create({
      ...first,
      messages: [...first.messages, { role: 'assistant', content: answer.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: '18 degrees' }] }],
    });
    expect(textOf(second)).toBe(ANSWER);
    expect(recorded(upstream.requests, 1).url).toBe(CHAT_PATH);
    expect(recorded(upstream.requests, 1).json.messages).toEqual(expect.arrayContaining([{ role: 'tool', tool_call_id: toolUse!.id, content: '18 degrees' }]));
  });
});

describe("Azure's content filter refusal", () => {
  beforeEach(async () => {
    await azureChannel(upstream.url, { priority: 10 });
    await azureChannel(backup.url);
    await harness.reloadCaches();
    upstream.setMode('contentFilter');
  });

  it('reaches an OpenAI client as a 400 content_filter, plain or streamed, not retried and not charged', async () => {
    const { openai } = await customer();
    for (const stream of [false, true]) {
      const failure = await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES, stream }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
      expect(failure).toMatchObject({ status: 400, code: 'content_filter', param: 'prompt' });
      const message = (failure as InstanceType<typeof OpenAI.BadRequestError>).message;
      expect(message).toContain("Azure OpenAI's content management policy");
      expect(message).not.toMatch(/https?:\/\//);
    }
    expect(backup.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);
    const channels = await harness.prisma.channel.findMany();
    expect(channels.map((channel) => channel.status)).toEqual([1, 1]);
  });

  it('reaches an Anthropic client as a 400 invalid_request_error, plain or streamed', async () => {
    const { anthropic } = await customer();
    const params = { model: CHAT_MODEL, max_tokens: 100, messages: [{ role: 'user' as const, content: QUESTION }] };
    for (const call of [anthropic.messages.create(params), anthropic.messages.stream(params).finalMessage()]) {
      const failure = await call.catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
      expect((failure as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('content management policy') },
      });
    }
    expect(backup.requests).toHaveLength(0);
    expect(await settledConsumeRows(harness)).toEqual([]);
  });
});

describe('a refused resource key', () => {
  it('disables the channel (auto_ban) with the key in no answer, reason or log line', async () => {
    const channel = await withAzureChannel();
    upstream.setMode('error401');
    const { key, openai } = await customer();
    const failure = await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(JSON.stringify((failure as InstanceType<typeof OpenAI.APIError>).error)).not.toContain(KEY);
    expect(recorded(upstream.requests).headers['api-key']).toBe(KEY);

    const disabled = await harness.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(disabled.status).toBe(3);
    expect(disabled.statusReason).toContain('upstream answered 401');
    expect(disabled.statusReason).not.toContain(KEY);

    // Out of routing at once, for every surface.
    upstream.setMode('ok');
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, { model: CHAT_MODEL, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(status).toBe(503);
    expect(text).not.toContain(KEY);
    expect(upstream.requests).toHaveLength(1);

    await harness.relay.ledger.flush();
    expect(logLines.some((line) => line.includes('channel disabled automatically'))).toBe(true);
    expect(logLines.filter((line) => line.includes(KEY))).toEqual([]);
  });
});

describe('retries', () => {
  it.each([['plain', false], ['streamed', true]])('%s: a 503 is retried on the next Azure channel, which is charged', async (_mode, stream) => {
    await azureChannel(upstream.url, { priority: 10 });
    const second = await azureChannel(backup.url, { priority: 0 });
    await harness.reloadCaches();
    upstream.setMode('overloaded');
    const { openai } = await customer();
    const content = stream
      ? (await readChatStream(await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES, stream: true }))).content
      : (await openai.chat.completions.create({ model: CHAT_MODEL, messages: MESSAGES })).choices[0]?.message.content;
    expect(content).toBe(ANSWER);
    expect(upstream.requests.map((request) => request.url)).toEqual([CHAT_PATH]);
    expect(recorded(backup.requests).url).toBe(CHAT_PATH);
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: second.id, promptTokens: PROMPT_TOKENS, completionTokens: 5, isStream: stream });
    // A transient failure: the first channel stays enabled.
    const channels = await harness.prisma.channel.findMany({ orderBy: { id: 'asc' } });
    expect(channels.map((channel) => channel.status)).toEqual([1, 1]);
    expect(logLines.filter((line) => line.includes(KEY))).toEqual([]);
  });
});
