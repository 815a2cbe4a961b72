// docs/api.md 2.12: AWS Bedrock channels (type 33) through the real relay with the official SDKs, on
// the fake Bedrock runtime (which checks every SigV4 signature by signing the request again):
// Anthropic's models through InvokeModel (/v1/messages passes through, thinking signatures intact),
// the others through Converse, AWS event-stream frames decoded as they arrive, AWS errors in each
// client's dialect, refused credentials disabling the channel without a secret anywhere.
import Anthropic from '@anthropic-ai/sdk';
import { createLogger } from '@modelgate/logger';
import { createChannel, type ChannelOverrides } from '@modelgate/testing';
import {
  FAKE_AWS_ACCESS_KEY_ID,
  FAKE_AWS_SECRET_ACCESS_KEY,
  FAKE_AWS_SESSION_ACCESS_KEY_ID,
  FAKE_AWS_SESSION_TOKEN,
  FAKE_BEDROCK_API_KEY,
  FAKE_TEXT_PIECE,
  FAKE_THOUGHT,
  FAKE_TOOL_ARGUMENTS,
  MEDIA_PART_TOKENS,
  type FakeUpstream,
} from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { readChatStream, reasoningOf, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { backup, createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';
import { anthropicClient, postMessages, type SentRequest, sseEvents } from './messages-support';

const CLAUDE = 'claude-sonnet-4-5';
const CLAUDE_ID = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const CLAUDE_PATH = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0';
const NOVA = 'nova-pro';
const NOVA_ID = 'amazon.nova-pro-v1:0';
const NOVA_PATH = '/model/amazon.nova-pro-v1%3A0';
const NOVA_2 = 'nova-2-lite';
const NOVA_2_ID = 'us.amazon.nova-2-lite-v1:0';
const MODELS = [CLAUDE, NOVA, NOVA_2];
const MAPPING = JSON.stringify({ [CLAUDE]: CLAUDE_ID, [NOVA]: NOVA_ID, [NOVA_2]: NOVA_2_ID });
const REGION = 'eu-central-1';
const KEY = `${FAKE_AWS_ACCESS_KEY_ID}|${FAKE_AWS_SECRET_ACCESS_KEY}`;
const WRONG_SECRET = 'wrongSecretAccessKey/ModelGate+9999999999';
const ANSWER = FAKE_TEXT_PIECE.repeat(5);
const QUESTION = 'Say hello to me';
const BETAS = 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';

const WEATHER_TOOL: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const WEATHER_FUNCTION: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_TOOL.input_schema },
};

const logLines: string[] = [];
relaySuite({}, { upstreams: 2, logger: createLogger({ service: 'relay', level: 'trace', destination: { write: (line: string) => logLines.push(line) } }) });

beforeEach(async () => {
  // The cache counts one test sets must not reach the next.
  await resetSuite({ chunks: 5, chunkDelayMs: 0, cachedTokens: 0, cacheWriteTokens: 0 });
  await setUnitPrices(harness.prisma, MODELS);
});

/** A Bedrock channel on `fake` serving the three models (default: long-term AWS credentials, REGION). */
async function bedrockChannel(fake: FakeUpstream, fields: ChannelOverrides = {}) {
  const channel = await createChannel(harness.prisma, {
    type: 33,
    baseUrl: fake.url,
    key: KEY,
    models: MODELS.join(','),
    modelMapping: MAPPING,
    settings: { region: REGION },
    ...fields,
  });
  await harness.reloadCaches();
  return channel;
}

async function customer() {
  const { key, userId } = await createCustomer(harness.prisma);
  return { key, userId, openai: openAiClient(harness, key), anthropic: anthropicClient(harness, key) };
}

const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

/** What every request to the fake Bedrock must be: signed for the channel's region, nothing of the client's key. */
function expectSigned(index = 0, fake: FakeUpstream = upstream) {
  const request = recorded(fake.requests, index);
  expect(request.cloud).toMatchObject({ region: REGION, auth: 'sigv4' });
  expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEMODELGATE001\/\d{8}\/eu-central-1\/bedrock\/aws4_request, /);
  return request;
}

describe('Anthropic models through InvokeModel', () => {
  beforeEach(() => bedrockChannel(upstream));

  it('passes /v1/messages through (whole): the body without model and stream, betas in the body, billed from the usage', async () => {
    const { key } = await customer();
    const client = anthropicClient(harness, key, { headers: { 'anthropic-beta': BETAS } });
    const message = await client.messages.create({ model: CLAUDE, max_tokens: 1024, system: 'Be brief.', messages: [{ role: 'user', content: QUESTION }] });
    expect(textOf(message)).toBe(ANSWER);
    expect(message).toMatchObject({ model: CLAUDE, stop_reason: 'end_turn', usage: { input_tokens: 6, output_tokens: 5 } });

    const request = expectSigned();
    expect(request.path).toBe(`${CLAUDE_PATH}/invoke`);
    expect(request.cloud?.model).toBe(CLAUDE_ID);
    expect(request.json).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: [{ role: 'user', content: QUESTION }],
      anthropic_beta: BETAS.split(','),
    });
    expect(JSON.stringify(request.headers)).not.toContain(key.slice(3));

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ modelName: CLAUDE, promptTokens: 6, completionTokens: 5, quota: -11n, isStream: false });
  });

  it("streams Anthropic's events from the event-stream frames, without Bedrock's metrics, billed from the usage", async () => {
    const { key, anthropic } = await customer();
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, { model: CLAUDE, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: QUESTION }] });
    expect(status).toBe(200);
    const events = sseEvents(text);
    expect(events.map((event) => event.event)).toEqual([
      'message_start', 'ping', 'content_block_start', ...Array(5).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    // Each event's `event:` line names its data's type, as Anthropic writes it.
    for (const event of events) expect(event.data.type).toBe(event.event);
    expect(events.at(-1)?.data).toEqual({ type: 'message_stop' });
    expect(text).not.toContain('amazon-bedrock');
    expect(expectSigned().path).toBe(`${CLAUDE_PATH}/invoke-with-response-stream`);
    expect(recorded(upstream.requests).json).not.toHaveProperty('stream');
    await expect(settledConsumeRow(harness)).resolves.toMatchObject({ promptTokens: 4, completionTokens: 5, quota: -9n, isStream: true });

    // The SDK's stream helper puts the same message together.
    const message = await anthropic.messages.stream({ model: CLAUDE, max_tokens: 1024, messages: [{ role: 'user', content: QUESTION }] }).finalMessage();
    expect(textOf(message)).toBe(ANSWER);
    expect(message.usage).toMatchObject({ input_tokens: 4, output_tokens: 5 });
  });

  describe.each([
    ['whole', false],
    ['streamed', true],
  ])('thinking and a tool call (%s)', (_name, stream) => {
    it('round-trips the signed thinking block and the tool_use unchanged', async () => {
      const { key } = await createCustomer(harness.prisma);
      const sent: SentRequest[] = [];
      const client = anthropicClient(harness, key, { sent });
      const params: Anthropic.MessageCreateParamsNonStreaming = {
        model: CLAUDE,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      };
      const first = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
      const [thinking, toolUse] = first.content;
      expect(thinking).toEqual({ type: 'thinking', thinking: FAKE_THOUGHT, signature: expect.stringMatching(/^sig-fake-\d+$/) });
      expect(toolUse).toEqual({ type: 'tool_use', id: expect.stringMatching(/^toolu_fake\d+$/), name: 'get_weather', input: FAKE_TOOL_ARGUMENTS });
      if (toolUse?.type !== 'tool_use') throw new Error('no tool call');

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
      // Every block of the assistant turn arrives as the client sent it, the signature included.
      for (const block of assistant) expect(received).toContain(JSON.stringify(block));
      const sentMessages = (JSON.parse(sent[1]!.body) as { messages: unknown[] }).messages;
      expect(request.json.messages).toEqual(sentMessages);
    });
  });

  it('translates OpenAI chat (plain and streamed) with a tool round trip', async () => {
    const { openai } = await customer();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const completion = await openai.chat.completions.create({ model: CLAUDE, messages, tools: [WEATHER_FUNCTION] });
    const [call] = completion.choices[0]?.message.tool_calls ?? [];
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({ id: expect.stringMatching(/^toolu_fake/), type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) } });
    const request = expectSigned();
    expect(request.path).toBe(`${CLAUDE_PATH}/invoke`);
    expect(request.json).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 4096, tools: [expect.objectContaining({ name: 'get_weather' })] });
    expect(request.json).not.toHaveProperty('model');

    const streamed = await readChatStream(await openai.chat.completions.create({
      model: CLAUDE,
      messages: [...messages, completion.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: '18 degrees' }],
      tools: [WEATHER_FUNCTION],
      stream: true,
      stream_options: { include_usage: true },
    }));
    expect(streamed).toMatchObject({ content: ANSWER, finishReason: 'stop', usage: { completion_tokens: 5 } });
    const second = recorded(upstream.requests, 1);
    expect(second.path).toBe(`${CLAUDE_PATH}/invoke-with-response-stream`);
    expect(second.json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: call!.id, name: 'get_weather', input: FAKE_TOOL_ARGUMENTS }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: '18 degrees' }] },
    ]);
  });

  it('translates Responses', async () => {
    const { openai } = await customer();
    const response = await openai.responses.create({ model: CLAUDE, input: QUESTION });
    expect(response.output_text).toBe(ANSWER);
    expect(expectSigned().path).toBe(`${CLAUDE_PATH}/invoke`);
  });

  it('answers count_tokens itself, without an upstream call', async () => {
    const { anthropic } = await customer();
    const count = await anthropic.messages.countTokens({ model: CLAUDE, messages: [{ role: 'user', content: QUESTION }] });
    expect(count.input_tokens).toBeGreaterThan(0);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('other models through Converse', () => {
  beforeEach(() => bedrockChannel(upstream));

  it('translates OpenAI chat: the Converse request, the answer, usage with cache reads and writes in the prompt', async () => {
    upstream.setMode('ok', { cachedTokens: 800, cacheWriteTokens: 150 });
    const { openai } = await customer();
    const completion = await openai.chat.completions.create({
      model: NOVA,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: QUESTION }],
      max_tokens: 300,
      temperature: 0.5,
      stop: ['END'],
    });
    expect(completion.choices[0]).toMatchObject({ message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' });
    expect(completion.usage).toMatchObject({ prompt_tokens: 6 + 950, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 800 } });

    const request = expectSigned();
    expect(request.path).toBe(`${NOVA_PATH}/converse`);
    expect(request.cloud?.model).toBe(NOVA_ID);
    expect(request.json).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: QUESTION }] }],
      inferenceConfig: { maxTokens: 300, temperature: 0.5, stopSequences: ['END'] },
    });
    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ modelName: NOVA, promptTokens: 956, completionTokens: 5, isStream: false });
    expect(row.other).toMatchObject({ cache_tokens: 800, cache_creation_tokens: 150 });
    await expectLedgerInvariant(harness.prisma);
  });

  it('streams OpenAI chat with a tool call, then its result, through ConverseStream', async () => {
    const { openai } = await customer();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await readChatStream(await openai.chat.completions.create({
      model: NOVA, messages, tools: [WEATHER_FUNCTION], tool_choice: 'required', stream: true, stream_options: { include_usage: true },
    }));
    expect(first.toolCalls).toEqual([{ id: expect.stringMatching(/^tooluse_fake\d+$/), name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) }]);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 10 });
    const request = expectSigned();
    expect(request.path).toBe(`${NOVA_PATH}/converse-stream`);
    expect(request.json.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'The weather in a city', inputSchema: { json: WEATHER_TOOL.input_schema } } }],
      toolChoice: { any: {} },
    });

    const [call] = first.toolCalls;
    const second = await readChatStream(await openai.chat.completions.create({
      model: NOVA,
      messages: [
        ...messages,
        { role: 'assistant', content: null, tool_calls: [{ id: call!.id, type: 'function', function: { name: call!.name, arguments: call!.arguments } }] },
        { role: 'tool', tool_call_id: call!.id, content: '18 degrees' },
      ],
      tools: [WEATHER_FUNCTION],
      stream: true,
      stream_options: { include_usage: true },
    }));
    expect(second).toMatchObject({ content: ANSWER, finishReason: 'stop', toolCalls: [] });
    expect(recorded(upstream.requests, 1).json.messages).toEqual([
      { role: 'user', content: [{ text: 'What is the weather in Paris?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: call!.id, name: 'get_weather', input: FAKE_TOOL_ARGUMENTS } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: call!.id, content: [{ text: '18 degrees' }] } }] },
    ]);
    const rows = await settledConsumeRows(harness);
    // The fake counts words: the question (6), the call's input as JSON (1), the result (2).
    expect(rows.map((row) => [row.promptTokens, row.completionTokens, row.isStream])).toEqual([[6, 10, true], [9, 5, true]]);
  });

  it.each([
    ['plain', false],
    ['streamed', true],
  ])('asks Nova 2 for reasoning and returns it as reasoning_content (%s)', async (_name, stream) => {
    const { openai } = await customer();
    const params = { model: NOVA_2, messages: [{ role: 'user' as const, content: QUESTION }], reasoning_effort: 'low' as const };
    const reasoning = stream
      ? (await readChatStream(await openai.chat.completions.create({ ...params, stream: true }))).reasoning
      : reasoningOf((await openai.chat.completions.create(params)).choices[0]?.message);
    expect(reasoning).toBe(FAKE_THOUGHT);
    expect(recorded(upstream.requests).json.additionalModelRequestFields).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } });
  });

  it('sends a data: URL image inline, and refuses an http image URL with a 400 before any upstream call', async () => {
    const { openai } = await customer();
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content: OpenAI.ChatCompletionContentPart[] = [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }];
    const completion = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content }] });
    expect(completion.usage?.prompt_tokens).toBe(3 + MEDIA_PART_TOKENS);
    expect(recorded(upstream.requests).json.messages).toEqual([{ role: 'user', content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: png } } }] }]);

    const linked = await openai.chat.completions.create({
      model: NOVA,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    }).catch((err: unknown) => err);
    expect(linked).toBeInstanceOf(OpenAI.BadRequestError);
    expect((linked as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ param: 'messages' });
    expect(upstream.requests).toHaveLength(1);
  });

  it.each([
    ['plain', false],
    ['streamed', true],
  ])('translates Anthropic Messages (%s)', async (_name, stream) => {
    const { anthropic } = await customer();
    const params = { model: NOVA, max_tokens: 100, messages: [{ role: 'user' as const, content: QUESTION }] };
    const message = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
    expect(textOf(message)).toBe(ANSWER);
    expect(message).toMatchObject({ model: NOVA, stop_reason: 'end_turn', usage: { input_tokens: 4, output_tokens: 5 } });
    expect(expectSigned().path).toBe(`${NOVA_PATH}/${stream ? 'converse-stream' : 'converse'}`);
  });

  it.each([
    ['plain', false],
    ['streamed', true],
  ])('translates Responses (%s)', async (_name, stream) => {
    const { openai } = await customer();
    const response = stream
      ? await openai.responses.stream({ model: NOVA, input: QUESTION }).finalResponse()
      : await openai.responses.create({ model: NOVA, input: QUESTION });
    expect(response.output_text).toBe(ANSWER);
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 5 });
    await expect(settledConsumeRow(harness)).resolves.toMatchObject({ modelName: NOVA, promptTokens: 4, completionTokens: 5, isStream: stream });
  });
});

describe('credentials', () => {
  it('signs with temporary credentials and their session token', async () => {
    await bedrockChannel(upstream, { key: `${FAKE_AWS_SESSION_ACCESS_KEY_ID}|${FAKE_AWS_SECRET_ACCESS_KEY}|${FAKE_AWS_SESSION_TOKEN}` });
    const { openai } = await customer();
    const completion = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] });
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    const request = recorded(upstream.requests);
    expect(request.cloud).toMatchObject({ auth: 'sigv4', region: REGION });
    expect(request.headers['x-amz-security-token']).toBe(FAKE_AWS_SESSION_TOKEN);
    expect(request.headers.authorization).toMatch(/SignedHeaders=[a-z0-9;-]*x-amz-security-token/);
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    await bedrockChannel(upstream, { key: FAKE_BEDROCK_API_KEY });
    const { anthropic } = await customer();
    const message = await anthropic.messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: QUESTION }] });
    expect(textOf(message)).toBe(ANSWER);
    const request = recorded(upstream.requests);
    expect(request.cloud?.auth).toBe('bearer');
    expect(request.headers.authorization).toBe(`Bearer ${FAKE_BEDROCK_API_KEY}`);
    expect(Object.keys(request.headers).filter((name) => name.startsWith('x-amz-'))).toEqual([]);
  });

  it.each([
    ['a wrong secret (InvalidSignatureException)', { key: `${FAKE_AWS_ACCESS_KEY_ID}|${WRONG_SECRET}` }, 'ok'],
    ['an unknown session token (UnrecognizedClientException)', { key: `${FAKE_AWS_SESSION_ACCESS_KEY_ID}|${FAKE_AWS_SECRET_ACCESS_KEY}|WrongSessionToken0000` }, 'ok'],
    ['AccessDeniedException', {}, 'error403'],
  ] as const)('disables a channel refused with %s; the call moves on; no secret in answers or logs', async (_name, fields, mode) => {
    const refused = await bedrockChannel(upstream, { ...fields, priority: 10 });
    await bedrockChannel(backup, { priority: 0 });
    upstream.setMode(mode);
    logLines.length = 0;
    const { openai, anthropic } = await customer();
    const completion = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] });
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    expect(upstream.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);

    const disabled = await harness.prisma.channel.findUniqueOrThrow({ where: { id: refused.id } });
    expect(disabled.status).toBe(3);
    expect(disabled.statusReason).toContain('upstream answered 403');
    // With no other channel, the client gets the refusal in its dialect.
    await harness.prisma.channel.update({ where: { id: refused.id }, data: { status: 1 } });
    await harness.prisma.channel.deleteMany({ where: { id: { not: refused.id } } });
    await harness.reloadCaches();
    const failure = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: expect.stringMatching(/authentication_error|permission_error/) } });

    const seen = [disabled.statusReason ?? '', JSON.stringify((failure as InstanceType<typeof Anthropic.APIError>).error), logLines.join('')].join('\n');
    for (const secret of [FAKE_AWS_SECRET_ACCESS_KEY, WRONG_SECRET, FAKE_AWS_SESSION_TOKEN, 'WrongSessionToken0000', FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SESSION_ACCESS_KEY_ID, 'Signature=']) {
      expect({ secret, seen: seen.includes(secret) }).toEqual({ secret, seen: false });
    }
  });

  it('refuses AWS credentials without a region as a channel failure (disabled), never a 500', async () => {
    const channel = await bedrockChannel(upstream, { settings: {} });
    const { openai } = await customer();
    const failure = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(upstream.requests).toHaveLength(0);
    const disabled = await harness.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(disabled.status).toBe(3);
    expect(disabled.statusReason).toContain('settings.region');
  });
});

describe('AWS errors and broken streams', () => {
  it('relays a ValidationException as a 400 in each dialect, masking the access key id and URLs', async () => {
    await bedrockChannel(upstream);
    upstream.setMode('error400');
    const { openai, anthropic } = await customer();
    const chat = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    const openAiError = (chat as InstanceType<typeof OpenAI.APIError>).error as { message: string; type: string; code: string };
    expect(openAiError).toMatchObject({ type: 'invalid_request_error', code: 'ValidationException' });
    expect(openAiError.message).toContain('[redacted]');
    expect(openAiError.message).toContain('[url]');
    expect(openAiError.message).not.toContain(FAKE_AWS_ACCESS_KEY_ID);

    const messages = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
    expect((messages as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(await settledConsumeRows(harness)).toEqual([]);
  });

  it('answers 429 after a ThrottlingException on every channel, retried on the next one first', async () => {
    await bedrockChannel(upstream, { priority: 10 });
    await bedrockChannel(backup, { priority: 0 });
    upstream.setMode('error429');
    backup.setMode('error429');
    const { openai, anthropic } = await customer();
    const failure = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'rate_limit_error' });
    expect([upstream.requests.length, backup.requests.length]).toEqual([1, 1]);
    const messages = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: QUESTION }] }).catch((err: unknown) => err);
    expect(messages).toBeInstanceOf(Anthropic.RateLimitError);
    expect((messages as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'rate_limit_error' } });
    // Throttling is no reason to disable a channel.
    expect((await harness.prisma.channel.findMany()).map((channel) => channel.status)).toEqual([1, 1]);
  });

  it.each(['error500', 'overloaded'] as const)('retries %s on the next channel before the first byte', async (mode) => {
    await bedrockChannel(upstream, { priority: 10 });
    await bedrockChannel(backup, { priority: 0 });
    upstream.setMode(mode);
    const { anthropic } = await customer();
    const message = await anthropic.messages.stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: QUESTION }] }).finalMessage();
    expect(textOf(message)).toBe(ANSWER);
    expect([upstream.requests.length, backup.requests.length]).toEqual([1, 1]);
  });

  it('disables a channel whose daily token quota is spent', async () => {
    const channel = await bedrockChannel(upstream);
    upstream.setMode('quotaExhausted');
    const { openai } = await customer();
    await expect(openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }] })).rejects.toBeInstanceOf(OpenAI.APIError);
    const disabled = await harness.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(disabled.status).toBe(3);
    expect(disabled.statusReason).toContain('upstream quota exhausted');
  });

  it("ends a passed-through Messages stream with an error event at an exception frame; charged for what was delivered", async () => {
    await bedrockChannel(upstream);
    upstream.setMode('errorMidStream');
    const { key } = await customer();
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, { model: CLAUDE, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: QUESTION }] });
    expect(status).toBe(200);
    const events = sseEvents(text);
    const last = events.at(-1);
    expect(last).toMatchObject({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: expect.stringContaining('The model stream was interrupted') } } });
    expect(events.map((event) => event.event)).not.toContain('message_stop');
    const delivered = events.filter((event) => event.event === 'content_block_delta').length;
    expect(delivered).toBeGreaterThan(0);
    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ promptTokens: 4, completionTokens: delivered, isStream: true });
    await expectLedgerInvariant(harness.prisma);
  });

  it('makes the OpenAI SDK throw at an exception frame of a Converse stream; charged for what was delivered', async () => {
    await bedrockChannel(upstream);
    upstream.setMode('errorMidStream');
    const { openai } = await customer();
    const stream = await openai.chat.completions.create({ model: NOVA, messages: [{ role: 'user', content: QUESTION }], stream: true });
    const texts: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toContain('The model stream was interrupted');
    expect(texts.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));
    await expect(settledConsumeRow(harness)).resolves.toMatchObject({ completionTokens: 2, isStream: true });
  });

  it('ends the stream with an error event at a frame whose CRC is wrong', async () => {
    await bedrockChannel(upstream);
    upstream.setMode('malformedSse');
    const { key } = await customer();
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, { model: CLAUDE, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: QUESTION }] });
    expect(status).toBe(200);
    const events = sseEvents(text);
    expect(events[0]?.event).toBe('message_start');
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { error: { message: expect.stringContaining('malformed') } } });
  });
});
