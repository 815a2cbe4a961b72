// docs/api.md 2.6 and 2.7: `POST /v1/chat/completions` through the real relay, with the openai SDK as
// the client, on each channel type: passed through to type 1, translated for types 14 and 24.
import { consumeOtherView } from '@modelgate/schemas';
import { FAKE_TEXT_PIECE, FAKE_THOUGHT, FAKE_TOOL_ARGUMENTS, type RecordedRequest } from '@modelgate/testing/fake-upstream';
import type OpenAI from 'openai';
import {
  ANTHROPIC,
  CHAT_CHANNELS,
  CHAT_MODELS,
  chatChannel,
  expectKeyNotForwarded,
  fullUsage,
  GEMINI,
  OPENAI,
  postForEvents,
  readChatStream,
  reasoningOf,
  recorded,
  settledConsumeRow,
  type DirectType,
} from './chat-support';
import { createCustomer, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

const SYSTEM = 'Be brief.';
const QUESTION = 'Say hello to me';
const MESSAGES: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: QUESTION },
];
/** The fakes count one token per word: 2 + 4. */
const PROMPT_TOKENS = 6;
const ANSWER = FAKE_TEXT_PIECE.repeat(5);
/** A model the OpenAI channel serves without a mapping, so its body can go byte for byte. */
const UNMAPPED_MODEL = 'gpt-4.1-nano';

const TYPES: [string, DirectType][] = [['OpenAI-compatible (1)', OPENAI], ['Anthropic (14)', ANTHROPIC], ['Gemini (24)', GEMINI]];
const TRANSLATED: [string, DirectType][] = [['Anthropic', ANTHROPIC], ['Gemini', GEMINI]];

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma, [...CHAT_MODELS, UNMAPPED_MODEL]);
  await chatChannel(harness.prisma, OPENAI, upstream.url, { models: `${CHAT_CHANNELS[OPENAI].model},${UNMAPPED_MODEL}` });
  await chatChannel(harness.prisma, ANTHROPIC, upstream.url);
  await chatChannel(harness.prisma, GEMINI, upstream.url);
  await harness.reloadCaches();
});

async function client() {
  const customer = await createCustomer(harness.prisma);
  return { customer, openai: openAiClient(harness, customer.key) };
}

/** The upstream request in the channel's own dialect: path, auth headers, the mapped model, the system prompt's place. */
function expectDialect(type: DirectType, request: RecordedRequest & { json: Record<string, unknown> }, stream: boolean): void {
  const { upstreamModel, key } = CHAT_CHANNELS[type];
  if (type === OPENAI) {
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${key}`);
    expect(request.json).toMatchObject({ model: upstreamModel, messages: MESSAGES });
    if (stream) expect(request.json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  } else if (type === ANTHROPIC) {
    expect(request.path).toBe('/v1/messages');
    expect(request.headers).toMatchObject({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    expect(request.headers.authorization).toBeUndefined();
    expect(request.json).toEqual({
      model: upstreamModel,
      max_tokens: 4096,
      system: SYSTEM,
      messages: [{ role: 'user', content: [{ type: 'text', text: QUESTION }] }],
      ...(stream ? { stream: true } : {}),
    });
  } else {
    expect(request.url).toBe(`/v1beta/models/${upstreamModel}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`);
    expect(request.headers['x-goog-api-key']).toBe(key);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.json).toEqual({
      systemInstruction: { parts: [{ text: SYSTEM }] },
      contents: [{ role: 'user', parts: [{ text: QUESTION }] }],
    });
  }
}

describe.each(TYPES)('chat on the %s channel', (_name, type) => {
  const { model } = CHAT_CHANNELS[type];

  it('answers a plain call: content, finish_reason, the full usage, the model the client asked for', async () => {
    const { customer, openai } = await client();
    const completion = await openai.chat.completions.create({ model, messages: MESSAGES });
    expect(completion).toMatchObject({ object: 'chat.completion', model, choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: ANSWER } }] });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.usage).toMatchObject(fullUsage({ prompt: PROMPT_TOKENS, completion: 5 }));

    const request = recorded(upstream.requests);
    expectDialect(type, request, false);
    expectKeyNotForwarded(request, customer.key);
    expect(await settledConsumeRow(harness)).toMatchObject({ modelName: model, promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: false });
  });

  it('streams with include_usage: deltas, finish_reason, a last usage chunk, and the SDK stream ends cleanly', async () => {
    const { customer, openai } = await client();
    const stream = await openai.chat.completions.create({ model, messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const streamed = await readChatStream(stream);
    expect(streamed).toMatchObject({ content: ANSWER, reasoning: '', toolCalls: [], finishReason: 'stop' });
    expect(streamed.usage).toMatchObject(fullUsage({ prompt: PROMPT_TOKENS, completion: 5 }));
    expect(streamed.chunks.every((chunk) => chunk.model === model && chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(streamed.chunks.at(-1)?.choices).toEqual([]);
    expect(streamed.chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(streamed.chunks.find((chunk) => chunk.choices[0])?.choices[0]?.delta.role).toBe('assistant');

    const request = recorded(upstream.requests);
    expectDialect(type, request, true);
    expectKeyNotForwarded(request, customer.key);
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 5, quota: -11n, isStream: true });
  });

  it('ends the stream with the usage chunk, then data: [DONE]', async () => {
    const { customer } = await client();
    const { status, events } = await postForEvents(harness, '/v1/chat/completions', customer.key, {
      model, messages: MESSAGES, stream: true, stream_options: { include_usage: true },
    });
    expect(status).toBe(200);
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2) ?? '{}')).toMatchObject({ choices: [], usage: fullUsage({ prompt: PROMPT_TOKENS, completion: 5 }) });
    for (const event of events.slice(0, -1)) expect(JSON.parse(event)).toMatchObject({ object: 'chat.completion.chunk', model });
  });

  it('without include_usage sends no usage chunk', async () => {
    const { openai } = await client();
    const streamed = await readChatStream(await openai.chat.completions.create({ model, messages: MESSAGES, stream: true }));
    expect(streamed.content).toBe(ANSWER);
    expect(streamed.usage).toBeUndefined();
    // Billed all the same: the relay asks the upstream for usage where it can.
    expect(await settledConsumeRow(harness)).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 5 });
  });
});

describe('pass-through on an OpenAI-compatible channel', () => {
  it('forwards the bytes untouched when the model is not mapped, unknown fields included', async () => {
    const { customer } = await client();
    const body = Buffer.from(
      `{ "model": "${UNMAPPED_MODEL}", "messages": [{"role": "user", "content": "caf\\u00e9 \u2615"}],\n` +
        ' "logit_bias": {"50256": -100}, "vendor_extension": {"kept": [1, 2.0, "x"]}, "temperature": 0.50 }',
    );
    const response = await fetch(`${harness.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as OpenAI.ChatCompletion).model).toBe(UNMAPPED_MODEL);
    expect(recorded(upstream.requests).body.equals(body)).toBe(true);
  });

  it('keeps unknown fields when the mapping rewrites the model', async () => {
    const { openai } = await client();
    const extras = { vendor_extension: { kept: [1, 2, 'x'] }, logit_bias: { 50256: -100 }, metadata: { trace: 'abc' } };
    await openai.chat.completions.create({ model: CHAT_CHANNELS[OPENAI].model, messages: MESSAGES, ...extras } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(recorded(upstream.requests).json).toEqual({ model: CHAT_CHANNELS[OPENAI].upstreamModel, messages: MESSAGES, ...extras });
  });
});

const WEATHER_TOOL: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const TOOL_RESULT = '{"temperature":21}';

/** One chat call, plain or streamed, as the parts a client reads. */
async function chat(openai: OpenAI, stream: boolean, body: OpenAI.ChatCompletionCreateParamsNonStreaming) {
  if (stream) {
    const streamed = await readChatStream(await openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }));
    return { content: streamed.content, reasoning: streamed.reasoning, toolCalls: streamed.toolCalls, finishReason: streamed.finishReason, usage: streamed.usage };
  }
  const completion = await openai.chat.completions.create(body);
  const choice = completion.choices[0];
  const toolCalls = (choice?.message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [{ id: call.id, ...call.function }] : []));
  return { content: choice?.message.content ?? '', reasoning: reasoningOf(choice?.message) ?? '', toolCalls, finishReason: choice?.finish_reason, usage: completion.usage };
}

describe.each(TRANSLATED)('a tool-call round trip translated to %s', (_name, type) => {
  const { model } = CHAT_CHANNELS[type];

  it.each([['plain', false], ['streaming', true]])('%s: the call keeps its id and the result goes back in the provider form', async (_mode, stream) => {
    const { openai } = await client();
    const first = await chat(openai, stream, { model, messages: MESSAGES, tools: [WEATHER_TOOL] });
    expect(first.finishReason).toBe('tool_calls');
    expect(first.toolCalls).toEqual([{ id: expect.any(String), name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) }]);
    expect(first.usage).toMatchObject({ completion_tokens: 10 });
    const call = first.toolCalls[0];
    if (!call) throw new Error('no tool call');
    // Anthropic's own id is kept; Gemini has none, the relay makes one up.
    expect(call.id).toMatch(type === ANTHROPIC ? /^toolu_fake\d+$/ : /^call_/);

    const offered = recorded(upstream.requests, 0).json;
    if (type === ANTHROPIC) {
      expect(offered.tools).toEqual([{ name: 'get_weather', description: 'Current weather in a city', input_schema: WEATHER_TOOL.function.parameters }]);
    } else {
      expect(offered.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', description: 'Current weather in a city', parametersJsonSchema: WEATHER_TOOL.function.parameters }] }]);
    }

    const second = await chat(openai, stream, {
      model,
      tools: [WEATHER_TOOL],
      messages: [
        ...MESSAGES,
        { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: call.id, content: TOOL_RESULT },
      ],
    });
    expect(second).toMatchObject({ content: ANSWER, finishReason: 'stop', toolCalls: [] });

    const followUp = recorded(upstream.requests, 1).json;
    if (type === ANTHROPIC) {
      expect((followUp.messages as unknown[]).slice(-2)).toEqual([
        { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: FAKE_TOOL_ARGUMENTS }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: TOOL_RESULT }] },
      ]);
    } else {
      expect((followUp.contents as unknown[]).slice(-2)).toEqual([
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: FAKE_TOOL_ARGUMENTS }, thoughtSignature: expect.any(String) }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: JSON.parse(TOOL_RESULT) } }] },
      ]);
    }
  });
});

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const DATA_URL = `data:image/png;base64,${PNG_BASE64}`;
const HTTP_URL = 'https://images.example.com/cat.png';
const IMAGE_PROMPT = 'What is in these pictures?';

/** Where each dialect puts the parts of the first user turn. */
const IMAGE_FORMS: Record<DirectType, (request: Record<string, unknown>) => unknown> = {
  [OPENAI]: (json) => (json.messages as { content: unknown }[])[0]?.content,
  [ANTHROPIC]: (json) => (json.messages as { content: unknown }[])[0]?.content,
  [GEMINI]: (json) => (json.contents as { parts: unknown }[])[0]?.parts,
};
/** What each provider must receive for [text, data: URL image, http image]. */
const EXPECTED_IMAGE_FORMS: Record<DirectType, unknown> = {
  [OPENAI]: [
    { type: 'text', text: IMAGE_PROMPT },
    { type: 'image_url', image_url: { url: DATA_URL } },
    { type: 'image_url', image_url: { url: HTTP_URL, detail: 'low' } },
  ],
  [ANTHROPIC]: [
    { type: 'text', text: IMAGE_PROMPT },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
    { type: 'image', source: { type: 'url', url: HTTP_URL } },
  ],
  [GEMINI]: [
    { text: IMAGE_PROMPT },
    { inlineData: { mimeType: 'image/png', data: PNG_BASE64 } },
    { fileData: { mimeType: 'image/png', fileUri: HTTP_URL } },
  ],
};

describe.each(TYPES)('images on the %s channel', (_name, type) => {
  it('reach the provider in its own form (a data: URL and an http URL)', async () => {
    const { openai } = await client();
    const completion = await openai.chat.completions.create({
      model: CHAT_CHANNELS[type].model,
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: IMAGE_PROMPT },
          { type: 'image_url', image_url: { url: DATA_URL } },
          { type: 'image_url', image_url: { url: HTTP_URL, detail: 'low' } },
        ],
      }],
    });
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
    expect(IMAGE_FORMS[type](recorded(upstream.requests).json)).toEqual(EXPECTED_IMAGE_FORMS[type]);
    // The fakes count 258 tokens per image they received, one per word.
    expect(completion.usage?.prompt_tokens).toBe(5 + 2 * 258);
  });
});

describe.each(TRANSLATED)('reasoning from %s', (_name, type) => {
  const { model } = CHAT_CHANNELS[type];
  // Anthropic bills thinking inside output_tokens and reports no split; Gemini reports thoughtsTokenCount.
  const usage = type === ANTHROPIC ? fullUsage({ prompt: PROMPT_TOKENS, completion: 8 }) : fullUsage({ prompt: PROMPT_TOKENS, completion: 8, reasoning: 3 });

  it.each([['plain', false], ['streaming', true]])('%s: reasoning_effort asks for thinking; the thoughts come back as reasoning_content', async (_mode, stream) => {
    const { openai } = await client();
    const answer = await chat(openai, stream, { model, messages: MESSAGES, reasoning_effort: 'low' });
    expect(answer).toMatchObject({ reasoning: FAKE_THOUGHT, content: ANSWER, finishReason: 'stop' });
    expect(answer.usage).toMatchObject(usage);

    const request = recorded(upstream.requests).json;
    if (type === ANTHROPIC) {
      expect(request.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      expect(request.max_tokens).toBe(4096);
    } else {
      expect(request.generationConfig).toEqual({ thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } });
    }
    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ completionTokens: 8 });
    expect(consumeOtherView(row.other as Record<string, unknown>)).toMatchObject({ reasoning_tokens: type === ANTHROPIC ? 0 : 3 });
  });

  it('streams the thoughts as reasoning_content deltas before the content', async () => {
    const { openai } = await client();
    const streamed = await readChatStream(await openai.chat.completions.create({ model, messages: MESSAGES, reasoning_effort: 'high', stream: true }));
    const kinds = streamed.chunks.flatMap((chunk) => {
      const delta = chunk.choices[0]?.delta;
      if (typeof reasoningOf(delta) === 'string') return ['reasoning'];
      return delta?.content ? ['content'] : [];
    });
    expect(kinds).toEqual(['reasoning', 'content', 'content', 'content', 'content', 'content']);
  });
});
