// docs/api.md 2.12: Google Vertex AI channels (type 41) through the real relay, with the official
// SDKs as clients. The relay signs in with the channel's service account key file (one token
// exchange per channel, shared by concurrent calls); Gemini models take generateContent byte for
// byte, Claude models take Messages through rawPredict (thinking signatures untouched), every other
// surface is translated; a refused key disables the channel without a secret in any answer or log.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { createLogger } from '@modelgate/logger';
import { CHANNEL_TYPE } from '@modelgate/schemas';
import { type ChannelOverrides, createChannel } from '@modelgate/testing';
import {
  FAKE_TEXT_PIECE,
  FAKE_THOUGHT,
  FAKE_TOOL_ARGUMENTS,
  FAKE_VERTEX_PROJECT,
  type FakeUpstream,
  fakeVertexServiceAccount,
  MEDIA_PART_TOKENS,
  type RecordedRequest,
  VERTEX_TOKEN_PATH,
} from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { readChatStream, reasoningOf, settledConsumeRow, settledConsumeRows } from './chat-support';
import { backup, createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';
import { anthropicClient, postMessages, sseEvents } from './messages-support';
import { responsesUsage, streamResponse } from './responses-support';

const GEMINI = 'gemini-2.5-flash';
const CLAUDE = 'claude-opus-4-5';
/** Vertex AI names Claude models with their version after `@`. */
const CLAUDE_ON_VERTEX = 'claude-opus-4-5@20251101';
const MODELS_PATH = `/v1/projects/${FAKE_VERTEX_PROJECT}/locations/global/publishers`;
const GEMINI_PATH = `${MODELS_PATH}/google/models/${GEMINI}`;
const CLAUDE_PATH = `${MODELS_PATH}/anthropic/models/${CLAUDE_ON_VERTEX}`;

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
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const logLines: string[] = [];
relaySuite({}, {
  upstreams: 2,
  logger: createLogger({ service: 'relay', level: 'trace', destination: { write: (line: string) => logLines.push(line) } }),
});

/**
 * The fake's service account for `fake`, made unique per call (`client_id`): channel ids restart
 * with every test, and a new key starts with no cached token.
 */
function serviceAccountKey(fake: FakeUpstream, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...(JSON.parse(fakeVertexServiceAccount(fake.url)) as object), client_id: randomUUID(), ...fields });
}

/** A key file the token endpoint refuses: signed by a key the fake does not know. */
const FOREIGN_PEM = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

function vertexChannel(fake: FakeUpstream, fields: ChannelOverrides = {}) {
  return createChannel(harness.prisma, {
    type: CHANNEL_TYPE.vertex,
    baseUrl: fake.url,
    key: serviceAccountKey(fake),
    models: `${GEMINI},${CLAUDE}`,
    modelMapping: JSON.stringify({ [CLAUDE]: CLAUDE_ON_VERTEX }),
    ...fields,
  });
}

async function withVertexChannel(fields: ChannelOverrides = {}) {
  const channel = await vertexChannel(upstream, fields);
  await harness.reloadCaches();
  return channel;
}

beforeEach(async () => {
  await resetSuite();
  logLines.length = 0;
  await setUnitPrices(harness.prisma, [GEMINI, CLAUDE]);
});

async function customer() {
  const { key, userId } = await createCustomer(harness.prisma);
  return { key, userId, openai: openAiClient(harness, key), anthropic: anthropicClient(harness, key) };
}

/** The SDK pointed at the relay's /v1beta, recording the bodies it sent. */
function genai(key: string, sent: string[] = []): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: key,
    httpOptions: {
      baseUrl: harness.url,
      apiVersion: 'v1beta',
      fetch: (url: Parameters<typeof fetch>[0], init?: RequestInit) => {
        sent.push(String(init?.body));
        return fetch(url, init);
      },
    },
  });
}

const exchangesAt = (fake: FakeUpstream = upstream) => fake.requests.filter((request) => request.path === VERTEX_TOKEN_PATH);
const modelCallsAt = (fake: FakeUpstream = upstream) => fake.requests.filter((request) => request.path !== VERTEX_TOKEN_PATH);

/** The `index`th call of a model route, with the checks every one of them passes: a token, nothing of the client's. */
function modelCall(index: number, clientKey: string, fake: FakeUpstream = upstream): RecordedRequest & { json: Record<string, unknown> } {
  const request = modelCallsAt(fake)[index];
  if (!request) throw new Error(`the fake received ${modelCallsAt(fake).length} model calls, not ${index + 1}`);
  expect(request.headers.authorization).toMatch(/^Bearer ya29\.fake\./);
  expect(request.headers['x-goog-api-key']).toBeUndefined();
  expect(request.headers['x-api-key']).toBeUndefined();
  expect(JSON.stringify(request.headers) + request.url + request.body.toString('utf8')).not.toContain(clientKey.slice(3));
  return request as RecordedRequest & { json: Record<string, unknown> };
}

/** Nothing secret (the fake's and the foreign private keys, assertions, access tokens) in any log line. */
function expectNoSecretLogged(): void {
  const pems = [(JSON.parse(fakeVertexServiceAccount(upstream.url)) as { private_key: string }).private_key, FOREIGN_PEM];
  const secrets = ['PRIVATE KEY', 'ya29.', ...pems.flatMap((pem) => pem.split('\n').filter((line) => line.length > 40))];
  for (const exchange of [...exchangesAt(upstream), ...exchangesAt(backup)]) {
    const assertion = new URLSearchParams(exchange.body.toString('utf8')).get('assertion') ?? '';
    secrets.push(...assertion.split('.'));
  }
  const text = logLines.join('');
  expect(text).not.toBe('');
  expect(secrets.filter((secret) => secret !== '' && text.includes(secret))).toEqual([]);
}

const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

describe('Gemini models: generateContent passes through', () => {
  it("lists in Gemini's model list only the models generateContent can serve, in OpenAI's list all of them", async () => {
    await withVertexChannel();
    const { key } = await customer();
    const gemini = (await (await fetch(`${harness.url}/v1beta/models`, { headers: { 'x-goog-api-key': key } })).json()) as { models: { name: string }[] };
    expect(gemini.models.map((model) => model.name)).toEqual([`models/${GEMINI}`]);
    const openai = await openAiClient(harness, key).models.list();
    expect(openai.data.map((model) => model.id).sort()).toEqual([CLAUDE, GEMINI].sort());
  });

  it('answers @google/genai plain and streamed with the SDK body byte for byte, one token exchange, billed from usageMetadata', async () => {
    const channel = await withVertexChannel();
    const { key } = await customer();
    const sent: string[] = [];
    const client = genai(key, sent);
    const response = await client.models.generateContent({ model: GEMINI, contents: 'one two three', config: { temperature: 0.5 } });
    expect(response.text).toBe(ANSWER);
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 5 });

    const texts: string[] = [];
    for await (const chunk of await client.models.generateContentStream({ model: GEMINI, contents: 'a b' })) texts.push(chunk.text ?? '');
    expect(texts).toEqual(Array(5).fill(FAKE_TEXT_PIECE));

    const [plain, streamed] = [modelCall(0, key), modelCall(1, key)];
    expect(plain.url).toBe(`${GEMINI_PATH}:generateContent`);
    expect(streamed.url).toBe(`${GEMINI_PATH}:streamGenerateContent?alt=sse`);
    expect(plain.cloud).toEqual({ project: FAKE_VERTEX_PROJECT, region: 'global', model: GEMINI, auth: 'bearer' });
    expect([plain.body.toString('utf8'), streamed.body.toString('utf8')]).toEqual(sent);
    expect(plain.json).toMatchObject({ generationConfig: { temperature: 0.5 } });
    expect(exchangesAt()).toHaveLength(1);

    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.channelId, row.isStream, row.promptTokens, row.completionTokens, row.quota])).toEqual([
      [channel.id, false, 3, 5, -8n],
      [channel.id, true, 2, 5, -7n],
    ]);
    await expectLedgerInvariant(harness.prisma);
  });

  it("uses the channel's region and project", async () => {
    await withVertexChannel({ settings: { region: 'europe-west4', project_id: 'other-project' } });
    const { key } = await customer();
    await genai(key).models.generateContent({ model: GEMINI, contents: 'hi' });
    expect(modelCall(0, key).url).toBe(`/v1/projects/other-project/locations/europe-west4/publishers/google/models/${GEMINI}:generateContent`);
  });

  it('is not offered for Claude models (no channel serves them generateContent)', async () => {
    await withVertexChannel();
    const { key } = await customer();
    const failure = await genai(key).models.generateContent({ model: CLAUDE, contents: 'hi' }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ status: 404 });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('Claude models: /v1/messages passes through rawPredict', () => {
  const WEATHER: Anthropic.Tool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
  const BETA = 'interleaved-thinking-2025-05-14';

  it.each([
    ['whole', false, 'rawPredict'],
    ['streamed', true, 'streamRawPredict'],
  ])('%s: thinking and a tool call round-trip, the signed thinking block byte for byte, billed from usage', async (_name, stream, method) => {
    await withVertexChannel();
    const { key } = await createCustomer(harness.prisma);
    const client = anthropicClient(harness, key, { headers: { 'anthropic-beta': BETA } });
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: CLAUDE,
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    };
    const first = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    expect(first.model).toBe(CLAUDE);
    const [thinking, toolUse] = first.content;
    expect(thinking).toEqual({ type: 'thinking', thinking: FAKE_THOUGHT, signature: expect.stringMatching(/^sig-fake-\d+$/) });
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_weather', input: FAKE_TOOL_ARGUMENTS });
    if (toolUse?.type !== 'tool_use') throw new Error('no tool call');

    const request = modelCall(0, key);
    expect(request.url).toBe(`${CLAUDE_PATH}:${method}`);
    expect(request.headers['anthropic-beta']).toBe(BETA);
    expect(request.json).toEqual({ anthropic_version: 'vertex-2023-10-16', ...params, model: undefined, ...(stream ? { stream: true } : {}) });
    expect(request.json).not.toHaveProperty('model');

    const second = await client.messages.create({
      ...params,
      messages: [
        ...params.messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18 degrees and sunny' }] },
      ],
    });
    expect(textOf(second)).toBe(ANSWER);
    const received = modelCall(1, key).body.toString('utf8');
    for (const block of first.content) expect(received).toContain(JSON.stringify(block));

    const rows = await settledConsumeRows(harness);
    // 6 prompt words; thinking (3) and the tool call (10), then thinking and the answer (5).
    expect(rows.map((row) => [row.modelName, row.isStream, row.completionTokens])).toEqual([
      [CLAUDE, stream, 13],
      [CLAUDE, false, 8],
    ]);
    expect(rows[0]?.promptTokens).toBe(6);
    expect(rows[0]?.quota).toBe(-19n);
  });

  it("relays the stream's events as Vertex sent them (the signature_delta untouched)", async () => {
    await withVertexChannel();
    const { key } = await createCustomer(harness.prisma);
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, {
      model: CLAUDE,
      max_tokens: 2048,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: QUESTION }],
    });
    expect(status).toBe(200);
    const events = sseEvents(text);
    const signature = events.map((event) => (event.data.delta as { signature?: string } | undefined)?.signature).find(Boolean);
    expect(signature).toMatch(/^sig-fake-\d+$/);
    // The event as the fake wrote it, bytes and separator included.
    expect(text).toContain(`event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"${signature}"}}\n\n`);
    expect(events[0]).toMatchObject({ event: 'message_start', data: { message: { model: CLAUDE } } });
    expect(events.at(-1)?.event).toBe('message_stop');
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: 4, completionTokens: 8, isStream: true });
  });
});

describe('chat completions (translated)', () => {
  beforeEach(() => withVertexChannel());

  it.each([
    [GEMINI, false, `${GEMINI_PATH}:generateContent`],
    [GEMINI, true, `${GEMINI_PATH}:streamGenerateContent?alt=sse`],
    [CLAUDE, false, `${CLAUDE_PATH}:rawPredict`],
    [CLAUDE, true, `${CLAUDE_PATH}:streamRawPredict`],
  ])('%s (stream %s) answers the OpenAI SDK through %s and bills the usage', async (model, stream, url) => {
    const { key, openai } = await customer();
    const content = stream
      ? (await readChatStream(await openai.chat.completions.create({ model, messages: MESSAGES, stream: true }))).content
      : (await openai.chat.completions.create({ model, messages: MESSAGES })).choices[0]?.message.content;
    expect(content).toBe(ANSWER);
    const request = modelCall(0, key);
    expect(request.url).toBe(url);
    if (model === CLAUDE) {
      expect(request.json).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 4096, system: SYSTEM, messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }] }], ...(stream ? { stream: true } : {}) });
    } else {
      expect(request.json).toEqual({ contents: [{ role: 'user', parts: [{ text: QUESTION }] }], systemInstruction: { parts: [{ text: SYSTEM }] } });
    }
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: model, promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: stream });
  });

  it.each([
    [GEMINI, false],
    [GEMINI, true],
    [CLAUDE, false],
    [CLAUDE, true],
  ])('%s (stream %s): a tool call round trip', async (model, stream) => {
    const { key, openai } = await customer();
    const ask = async (messages: OpenAI.ChatCompletionMessageParam[]) => {
      if (stream) return readChatStream(await openai.chat.completions.create({ model, messages, tools: [WEATHER_TOOL], stream: true }));
      const completion = await openai.chat.completions.create({ model, messages, tools: [WEATHER_TOOL] });
      const choice = completion.choices[0];
      const toolCalls = (choice?.message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [{ id: call.id, ...call.function }] : []));
      return { content: choice?.message.content ?? '', toolCalls, finishReason: choice?.finish_reason };
    };
    const first = await ask(MESSAGES);
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toEqual([{ id: expect.any(String), name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) }]);
    const call = first.toolCalls[0]!;

    const second = await ask([
      ...MESSAGES,
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' },
    ]);
    expect(second).toMatchObject({ content: ANSWER, finishReason: 'stop', toolCalls: [] });
    const received = modelCall(1, key).body.toString('utf8');
    expect(received).toContain(model === CLAUDE ? '"type":"tool_result"' : '"functionResponse"');
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => row.completionTokens)).toEqual([10, 5]);
  });

  it.each([GEMINI, CLAUDE])('%s: an image goes up inline and is billed at the tokens reported', async (model) => {
    const { key, openai } = await customer();
    const completion = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }],
    });
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    const received = modelCall(0, key).body.toString('utf8');
    expect(received).toContain(model === CLAUDE ? JSON.stringify({ type: 'base64', media_type: 'image/png', data: PNG }) : JSON.stringify({ inlineData: { mimeType: 'image/png', data: PNG } }));
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: 3 + MEDIA_PART_TOKENS, completionTokens: 5 });
  });

  it.each([GEMINI, CLAUDE])('%s: reasoning comes back as reasoning_content', async (model) => {
    const { openai } = await customer();
    const completion = await openai.chat.completions.create({ model, messages: MESSAGES, reasoning_effort: 'low' });
    expect(reasoningOf(completion.choices[0]?.message)).toBe(FAKE_THOUGHT);
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    // Gemini reports its thoughts apart; Anthropic counts thinking in output_tokens without a split.
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(model === GEMINI ? 3 : 0);
  });
});

describe('Responses and Messages (translated)', () => {
  beforeEach(() => withVertexChannel());

  it.each([GEMINI, CLAUDE])('%s answers Responses plain and streamed', async (model) => {
    const { openai } = await customer();
    const body = { model, instructions: SYSTEM, input: QUESTION };
    const response = await openai.responses.create(body);
    expect(response).toMatchObject({ status: 'completed', model, output_text: ANSWER });
    expect(response.usage).toEqual(responsesUsage({ input: PROMPT_TOKENS, output: 5 }));
    const { response: streamed } = await streamResponse(openai, body);
    expect(streamed).toMatchObject({ status: 'completed', model, output_text: ANSWER });
    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens])).toEqual([[false, 6, 5], [true, 6, 5]]);
  });

  it('answers Messages on a Gemini model plain and streamed', async () => {
    const { key, anthropic } = await customer();
    const params = { model: GEMINI, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };
    expect(textOf(await anthropic.messages.create(params))).toBe(ANSWER);
    expect(textOf(await anthropic.messages.stream(params).finalMessage())).toBe(ANSWER);
    expect(modelCall(0, key).url).toBe(`${GEMINI_PATH}:generateContent`);
    expect(modelCall(1, key).url).toBe(`${GEMINI_PATH}:streamGenerateContent?alt=sse`);
  });
});

describe('the access token', () => {
  it('is exchanged once for a burst of 10 concurrent calls, and shared by all of them', async () => {
    await withVertexChannel();
    const { key, openai, anthropic } = await customer();
    const calls = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? openai.chat.completions.create({ model: GEMINI, messages: MESSAGES }).then((completion) => completion.choices[0]?.message.content)
        : anthropic.messages.create({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: QUESTION }] }).then(textOf),
    );
    expect(await Promise.all(calls)).toEqual(Array(10).fill(ANSWER));
    expect(exchangesAt()).toHaveLength(1);
    const tokens = new Set(modelCallsAt().map((request) => request.headers.authorization));
    expect(tokens.size).toBe(1);
    expect(modelCall(0, key).headers.authorization).toMatch(/^Bearer ya29\.fake\./);
    await harness.relay.ledger.flush();
    expectNoSecretLogged();
  });

  it('is exchanged again after a model route answered 401 (a token revoked early), and the channel asked again with the new one', async () => {
    const channel = await withVertexChannel();
    const { openai } = await customer();
    await openai.chat.completions.create({ model: GEMINI, messages: MESSAGES });
    // The model route refuses the cached token; the relay exchanges and asks the channel again.
    upstream.setMode('error401');
    const answer = await openai.chat.completions.create({ model: GEMINI, messages: MESSAGES }).catch((err: unknown) => err);
    expect(answer).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(exchangesAt()).toHaveLength(2);
    expect(modelCallsAt()).toHaveLength(3);
    // A refusal of a fresh token is the key's: with auto_ban on, the channel is disabled.
    expect((await harness.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } })).status).toBe(3);
    expectNoSecretLogged();
  });
});

describe('a refused service account key', () => {
  it('disables the channel (auto_ban): the client gets an error without a secret, no model route is called, nothing is logged', async () => {
    const key = serviceAccountKey(upstream, { private_key: FOREIGN_PEM });
    const channel = await withVertexChannel({ key });
    const { key: clientKey, openai } = await customer();
    const failure = await openai.chat.completions.create({ model: GEMINI, messages: MESSAGES }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    const answer = JSON.stringify((failure as InstanceType<typeof OpenAI.APIError>).error);
    expect(answer).toContain('the token endpoint refused the service account key');
    expect(answer).not.toMatch(/PRIVATE KEY|ya29\.|eyJ/);
    expect(exchangesAt()).toHaveLength(1);
    expect(modelCallsAt()).toHaveLength(0);

    const disabled = await harness.prisma.channel.findUniqueOrThrow({ where: { id: channel.id } });
    expect(disabled.status).toBe(3);
    expect(disabled.statusReason).toBe('the credential was refused: the token endpoint refused the service account key (400 invalid_grant: Invalid JWT Signature.)');

    // Out of routing for every surface, the Messages client included.
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': clientKey }, { model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(status).toBe(503);
    expect(text).not.toMatch(/PRIVATE KEY|ya29\./);
    expect(exchangesAt()).toHaveLength(1);
    expect(await settledConsumeRows(harness)).toEqual([]);
    expect(logLines.some((line) => line.includes('channel disabled automatically'))).toBe(true);
    expectNoSecretLogged();
  });

  it('reaches an Anthropic client in its shape', async () => {
    await withVertexChannel({ key: serviceAccountKey(upstream, { private_key: FOREIGN_PEM }) });
    const { anthropic } = await customer();
    const failure = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});

describe('upstream errors in the client dialect', () => {
  beforeEach(() => withVertexChannel());

  it("a Claude model's 400 reaches an Anthropic client as Anthropic's error, not retried", async () => {
    upstream.setMode('error400');
    const { anthropic } = await customer();
    const failure = await anthropic.messages.create({ model: CLAUDE, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(modelCallsAt()).toHaveLength(1);
  });

  it("a Gemini model's 400 reaches an OpenAI client and @google/genai in their shapes", async () => {
    upstream.setMode('error400');
    const { key, openai } = await customer();
    const failure = await openai.chat.completions.create({ model: GEMINI, messages: MESSAGES }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, type: 'invalid_request_error' });
    const google = await genai(key).models.generateContent({ model: GEMINI, contents: 'hi' }).catch((err: unknown) => err);
    expect(google).toMatchObject({ status: 400 });
    expect(String((google as Error).message)).toContain('INVALID_ARGUMENT');
  });
});

describe('retries', () => {
  async function twoChannels(first: ChannelOverrides = {}) {
    await vertexChannel(upstream, { priority: 10, ...first });
    const second = await vertexChannel(backup, { priority: 0 });
    await harness.reloadCaches();
    return second;
  }

  it.each([
    ['a 503', 'overloaded', false],
    ['a 503', 'overloaded', true],
    ['a 429', 'error429', false],
    ['a 429', 'error429', true],
  ] as const)('%s (%s, stream %s) moves to the next Vertex channel, which is charged', async (_name, mode, stream) => {
    const second = await twoChannels();
    upstream.setMode(mode);
    const { key, openai } = await customer();
    const content = stream
      ? (await readChatStream(await openai.chat.completions.create({ model: CLAUDE, messages: MESSAGES, stream: true }))).content
      : (await openai.chat.completions.create({ model: CLAUDE, messages: MESSAGES })).choices[0]?.message.content;
    expect(content).toBe(ANSWER);
    expect(modelCallsAt()).toHaveLength(1);
    expect(modelCall(0, key, backup).url).toBe(`${CLAUDE_PATH}:${stream ? 'streamRawPredict' : 'rawPredict'}`);
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: second.id, promptTokens: PROMPT_TOKENS, completionTokens: 5, isStream: stream });
    const channels = await harness.prisma.channel.findMany({ orderBy: { id: 'asc' } });
    expect(channels.map((channel) => channel.status)).toEqual([1, 1]);
  });

  it('an unreachable token endpoint moves to the next channel without disabling the first', async () => {
    const second = await twoChannels({ key: serviceAccountKey(upstream, { token_uri: 'http://127.0.0.1:1/token' }) });
    const { key, openai } = await customer();
    const completion = await openai.chat.completions.create({ model: GEMINI, messages: MESSAGES });
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    expect(upstream.requests).toHaveLength(0);
    expect(modelCall(0, key, backup).url).toBe(`${GEMINI_PATH}:generateContent`);
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: second.id });
    const channels = await harness.prisma.channel.findMany({ orderBy: { id: 'asc' } });
    expect(channels.map((channel) => channel.status)).toEqual([1, 1]);
    expect(logLines.some((line) => line.includes('upstream attempt failed') && line.includes('"failure":"connect"'))).toBe(true);
    expectNoSecretLogged();
  });
});
