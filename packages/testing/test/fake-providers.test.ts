// The fake providers, driven by the providers' official SDKs: if an SDK cannot parse what a fake
// answers, the relay's tests built on that fake prove nothing about the real provider.
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, FunctionCallingConfigMode, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import {
  FAKE_FLAGGED_WORD,
  FAKE_GEMINI_IMAGE_TOKENS,
  FAKE_PNG,
  FAKE_TEXT_PIECE,
  FAKE_THOUGHT,
  FAKE_TOOL_ARGUMENT_PIECES,
  FAKE_TOOL_ARGUMENTS,
  fakeEmbedding,
  type FakeMode,
  type FakeUpstream,
  startFakeUpstream,
} from '../src/fake-upstream';

const KEY = 'sk-fake-provider-key';
const TEXT = FAKE_TEXT_PIECE.repeat(5);
const WEATHER_TOOL = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const TIME_TOOL = { name: 'get_time', description: 'Time in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeUpstream();
});
afterEach(() => fake.close());

const mode = (fakeMode: FakeMode) => ({ headers: { 'x-fake-mode': fakeMode } });

describe('OpenAI (openai SDK)', () => {
  const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${fake.url}/v1`, maxRetries: 0 });
  const tools = [WEATHER_TOOL, TIME_TOOL].map((fn) => ({ type: 'function' as const, function: fn }));

  it('answers a plain chat with text and the full usage object, cached tokens included in prompt_tokens', async () => {
    fake.setMode('ok', { cachedTokens: 100 });
    const completion = await openai().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'system', content: 'Be brief' }, { role: 'user', content: [{ type: 'text', text: 'one two three' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
    });
    expect(completion).toMatchObject({ id: 'chatcmpl-fake1', object: 'chat.completion', model: 'gpt-4o' });
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: TEXT } });
    // 2 + 3 words + 258 for the image + 100 cached
    expect(completion.usage).toMatchObject({
      prompt_tokens: 363,
      completion_tokens: 5,
      total_tokens: 368,
      prompt_tokens_details: { cached_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(fake.requests[0]).toMatchObject({ dialect: 'openai', path: '/v1/chat/completions', completed: true });
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('calls the first tool with reasoning, then answers text after the tool result', async () => {
    const completion = await openai().chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools,
      reasoning_effort: 'low',
    });
    const message = completion.choices[0]?.message;
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(message?.content).toBeNull();
    expect(message?.tool_calls).toEqual([{ id: 'call_fake1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect((message as unknown as { reasoning_content: string }).reasoning_content).toBe(FAKE_THOUGHT);
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 13, completion_tokens_details: { reasoning_tokens: 3 } });

    const answer = await openai().chat.completions.create({
      model: 'deepseek-reasoner',
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: message?.tool_calls },
        { role: 'tool', tool_call_id: 'call_fake1', content: 'sunny' },
      ],
      tools,
    });
    expect(answer.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: TEXT } });
    // 3 words + the arguments' JSON (1 word) + "sunny"
    expect(answer.usage?.prompt_tokens).toBe(5);
  });

  it('calls the tool that tool_choice forces, and none when tool_choice is none', async () => {
    const forced = await openai().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'time?' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    expect(forced.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_time' } });
    const none = await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'time?' }], tools, tool_choice: 'none' });
    expect(none.choices[0]?.message.content).toBe(TEXT);
  });

  it('caps the text at max_completion_tokens with finish_reason length', async () => {
    const completion = await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 2 });
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: FAKE_TEXT_PIECE.repeat(2) } });
  });

  it('streams chat.completion.chunk events with the usage chunk last only under include_usage', async () => {
    const stream = await openai().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'one two' }],
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'medium',
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === 'chatcmpl-fake1')).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(TEXT);
    expect(chunks.map((chunk) => (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('')).toBe(FAKE_THOUGHT);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 8, total_tokens: 10, completion_tokens_details: { reasoning_tokens: 3 } });
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(fake.requests[0]?.body.toString()).toContain('"include_usage":true');

    const plain = await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const plainChunks = [];
    for await (const chunk of plain) plainChunks.push(chunk);
    expect(plainChunks.some((chunk) => chunk.usage)).toBe(false);
  });

  it('streams a tool call the SDK assembles, its arguments split over two deltas', async () => {
    const runner = openai().chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools,
      stream_options: { include_usage: true },
    });
    const argumentDeltas: string[] = [];
    runner.on('chunk', (chunk) => {
      const args = chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments;
      if (args) argumentDeltas.push(args);
    });
    const completion = await runner.finalChatCompletion();
    expect(argumentDeltas).toHaveLength(2);
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'call_fake1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) } },
    ]);
    expect(completion.usage).toMatchObject({ completion_tokens: 10 });
  });

  it('answers embeddings as floats and as float32 base64, which the SDK asks for and decodes by default', async () => {
    const input = ['first text', 'second one here'];
    const floats = await openai().embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'float', dimensions: 16 });
    expect(floats.data.map((item) => item.embedding)).toEqual(input.map((text) => fakeEmbedding(text, 16)));
    expect(floats.data.map((item) => item.index)).toEqual([0, 1]);
    expect(floats.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });

    // Asked for explicitly, base64 reaches the caller as sent: float32 little-endian bytes.
    const encoded = await openai().embeddings.create({ model: 'text-embedding-3-small', input, encoding_format: 'base64', dimensions: 16 });
    const bytes = Buffer.from(String(encoded.data[0]?.embedding), 'base64');
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4))).toEqual(floats.data[0]?.embedding);

    // Without encoding_format the SDK asks for base64 and decodes it itself; 8 dimensions by default.
    const decoded = await openai().embeddings.create({ model: 'text-embedding-3-small', input });
    expect(fake.requests[2]?.json).toMatchObject({ encoding_format: 'base64' });
    expect(decoded.data.map((item) => item.embedding)).toEqual(input.map((text) => fakeEmbedding(text, 8)));
  });

  it('answers legacy completions', async () => {
    const completion = await openai().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'one two three', max_tokens: 4 });
    expect(completion).toMatchObject({ id: 'cmpl-fake1', object: 'text_completion', choices: [{ text: FAKE_TEXT_PIECE.repeat(4), finish_reason: 'stop' }] });
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it.each([
    ['error401', OpenAI.AuthenticationError, 401],
    ['error429', OpenAI.RateLimitError, 429],
    ['quotaExhausted', OpenAI.RateLimitError, 429],
    ['overloaded', OpenAI.InternalServerError, 503],
  ] as const)('%s is an %p with status %d', async (fakeMode, errorClass, status) => {
    const failure = await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, mode(fakeMode)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(failure).toMatchObject({ status });
  });

  it('ends a stream with an in-stream error the SDK throws (errorMidStream)', async () => {
    const stream = await openai().chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }, mode('errorMidStream'));
    const received: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(received.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));
  });
});

describe('OpenAI Responses (openai SDK)', () => {
  const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${fake.url}/v1`, maxRetries: 0 });
  const tools = [WEATHER_TOOL, TIME_TOOL].map((fn) => ({ type: 'function' as const, strict: false, ...fn }));

  it('answers a response with output_text, usage with cached tokens, and the request parameters echoed', async () => {
    fake.setMode('ok', { cachedTokens: 100 });
    const response = await openai().responses.create({
      model: 'gpt-5',
      instructions: 'Be brief',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'one two three' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'auto' }] }],
      previous_response_id: 'resp_earlier',
      temperature: 0.5,
      store: false,
    });
    expect(response).toMatchObject({
      id: 'resp_fake1',
      object: 'response',
      status: 'completed',
      model: 'gpt-5',
      instructions: 'Be brief',
      previous_response_id: 'resp_earlier',
      temperature: 0.5,
      store: false,
      error: null,
      incomplete_details: null,
    });
    expect(response.output_text).toBe(TEXT);
    expect(response.output).toEqual([
      { id: 'msg_fake1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: TEXT, annotations: [], logprobs: [] }] },
    ]);
    // 2 + 3 words + 258 for the image + 100 cached
    expect(response.usage).toEqual({
      input_tokens: 363,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 368,
    });
    expect(fake.requests[0]).toMatchObject({ dialect: 'openai', path: '/v1/responses', completed: true });
  });

  it('calls a function with a reasoning item first, then answers text after the function_call_output', async () => {
    const first = await openai().responses.create({ model: 'gpt-5', input: 'weather in Paris?', tools, reasoning: { effort: 'low' } });
    expect(first.output).toEqual([
      { id: 'rs_fake1', type: 'reasoning', summary: [{ type: 'summary_text', text: FAKE_THOUGHT }] },
      { id: 'fc_fake1', type: 'function_call', status: 'completed', call_id: 'call_fake1', name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) },
    ]);
    expect(first.usage).toMatchObject({ input_tokens: 3, output_tokens: 13, output_tokens_details: { reasoning_tokens: 3 } });
    expect(first.reasoning).toEqual({ effort: 'low', summary: null });

    const answer = await openai().responses.create({
      model: 'gpt-5',
      tools,
      input: [
        { role: 'user', content: 'weather in Paris?' },
        ...first.output.filter((item) => item.type === 'function_call'),
        { type: 'function_call_output', call_id: 'call_fake1', output: 'sunny' },
      ],
    });
    expect(answer.output_text).toBe(TEXT);
    // 3 words + the arguments' JSON (1 word) + "sunny"
    expect(answer.usage?.input_tokens).toBe(5);

    const forced = await openai().responses.create({ model: 'gpt-5', input: 'time?', tools, tool_choice: { type: 'function', name: 'get_time' } });
    expect(forced.output[0]).toMatchObject({ type: 'function_call', name: 'get_time' });
    const none = await openai().responses.create({ model: 'gpt-5', input: 'time?', tools, tool_choice: 'none' });
    expect(none.output_text).toBe(TEXT);
  });

  it('is incomplete when max_output_tokens cuts the text', async () => {
    const response = await openai().responses.create({ model: 'gpt-5', input: 'hi', max_output_tokens: 2 });
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, max_output_tokens: 2 });
    expect(response.output_text).toBe(FAKE_TEXT_PIECE.repeat(2));
    expect(response.usage?.output_tokens).toBe(2);
  });

  it("streams OpenAI's event sequence with sequence numbers, which the SDK assembles into the final response", async () => {
    const stream = openai().responses.stream({ model: 'gpt-5', input: 'one two', reasoning: { effort: 'medium' } });
    const events: { type: string; sequence_number: number }[] = [];
    stream.on('event', (event) => events.push(event));
    const response = await stream.finalResponse();
    expect(events.map((event) => event.type)).toEqual([
      'response.created', 'response.in_progress',
      'response.output_item.added', 'response.reasoning_summary_part.added', 'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done', 'response.reasoning_summary_part.done', 'response.output_item.done',
      'response.output_item.added', 'response.content_part.added', ...Array(5).fill('response.output_text.delta'),
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(response).toMatchObject({ id: 'resp_fake1', status: 'completed', output_text: TEXT });
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.usage).toMatchObject({ input_tokens: 2, output_tokens: 8, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 10 });
    expect(fake.requests[0]?.json).toMatchObject({ stream: true });
    const raw = await fetch(`${fake.url}/v1/responses`, { method: 'POST', body: JSON.stringify({ model: 'gpt-5', input: 'hi', stream: true }) });
    expect((await raw.text()).split('\n\n')[0]).toMatch(/^event: response\.created\ndata: \{"type":"response\.created","sequence_number":0,/);
  });

  it('streams a function call whose arguments come in two deltas', async () => {
    const stream = openai().responses.stream({ model: 'gpt-5', input: 'weather?', tools });
    const deltas: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(deltas).toEqual([...FAKE_TOOL_ARGUMENT_PIECES]);
    expect(response.output).toMatchObject([
      { id: 'fc_fake1', type: 'function_call', status: 'completed', call_id: 'call_fake1', name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) },
    ]);
    expect(response.usage?.output_tokens).toBe(10);
  });

  it('ends a stream cut by max_output_tokens with response.incomplete', async () => {
    const stream = await openai().responses.create({ model: 'gpt-5', input: 'hi', max_output_tokens: 3, stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('response.incomplete');
  });

  it.each([
    ['error401', OpenAI.AuthenticationError, 401],
    ['error429', OpenAI.RateLimitError, 429],
    ['overloaded', OpenAI.InternalServerError, 503],
  ] as const)('%s is an %p with status %d', async (fakeMode, errorClass, status) => {
    const failure = await openai().responses.create({ model: 'gpt-5', input: 'hi' }, mode(fakeMode)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(failure).toMatchObject({ status });
  });

  it('ends a stream with an error event the SDK throws, then response.failed (errorMidStream)', async () => {
    const stream = await openai().responses.create({ model: 'gpt-5', input: 'hi', stream: true }, mode('errorMidStream'));
    const received: string[] = [];
    const failure = await (async () => {
      for await (const event of stream) if (event.type === 'response.output_text.delta') received.push(event.delta);
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure).toMatchObject({ code: 'server_error' });
    expect(received.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));

    const raw = await fetch(`${fake.url}/v1/responses`, { method: 'POST', headers: { 'x-fake-mode': 'errorMidStream' }, body: JSON.stringify({ model: 'gpt-5', input: 'hi', stream: true }) });
    const last = (await raw.text()).trim().split('\n\n').at(-1) ?? '';
    expect(last.split('\n')[0]).toBe('event: response.failed');
    expect(JSON.parse(last.split('\n')[1]?.slice('data: '.length) ?? '')).toMatchObject({
      type: 'response.failed',
      sequence_number: 7,
      response: { id: 'resp_fake2', status: 'failed', error: { code: 'server_error' } },
    });
  });
});

describe('Anthropic (@anthropic-ai/sdk)', () => {
  const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
  const tools = [WEATHER_TOOL, TIME_TOOL].map(({ parameters, ...tool }) => ({ ...tool, input_schema: parameters as Anthropic.Tool.InputSchema }));
  const thinking = { type: 'enabled', budget_tokens: 1024 } as const;

  it('answers a Message with a signed thinking block and a tool_use, cache usage apart from input_tokens', async () => {
    fake.setMode('ok', { cachedTokens: 1000, cacheWriteTokens: 50 });
    const message = await anthropic().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      system: 'You know the weather',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'weather in Paris?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }],
      thinking,
      tools,
    });
    expect(message).toMatchObject({ id: 'msg_fake1', type: 'message', role: 'assistant', stop_reason: 'tool_use' });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: FAKE_THOUGHT, signature: 'sig-fake-1' },
      { type: 'tool_use', id: 'toolu_fake1', name: 'get_weather', input: FAKE_TOOL_ARGUMENTS },
    ]);
    // 4 system words + 3 words + 258 for the image; 3 thinking + 10 tool-call output tokens
    expect(message.usage).toMatchObject({ input_tokens: 265, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50, output_tokens: 13 });
    expect(fake.requests[0]).toMatchObject({ dialect: 'anthropic', path: '/v1/messages' });
    expect(fake.requests[0]?.headers).toMatchObject({ authorization: `Bearer ${KEY}`, 'anthropic-version': expect.any(String) });
  });

  it('answers text after a tool_result, capped by max_tokens', async () => {
    const message = await anthropic().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 3,
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_fake1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_fake1', content: 'sunny and warm' }] },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: FAKE_TEXT_PIECE.repeat(3) }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
  });

  it("streams Anthropic's event sequence, which the SDK assembles into thinking, text and tool_use", async () => {
    const stream = anthropic().messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 2048, thinking, messages: [{ role: 'user', content: 'hi there' }] });
    const events: string[] = [];
    stream.on('streamEvent', (event) => events.push(event.type === 'content_block_delta' ? event.delta.type : event.type));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: FAKE_THOUGHT, signature: 'sig-fake-1' },
      { type: 'text', text: TEXT },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 2, output_tokens: 8 });
    expect(events).toEqual([
      'message_start',
      'content_block_start', 'thinking_delta', 'signature_delta', 'content_block_stop',
      'content_block_start', ...Array(5).fill('text_delta'), 'content_block_stop',
      'message_delta', 'message_stop',
    ]);
    const raw = fake.requests[0]?.json;
    expect(raw).toMatchObject({ stream: true });

    const toolStream = anthropic().messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 1024, tools, messages: [{ role: 'user', content: 'weather?' }] });
    const partials: string[] = [];
    toolStream.on('inputJson', (partial) => partials.push(partial));
    const toolMessage = await toolStream.finalMessage();
    expect(partials).toHaveLength(2);
    expect(toolMessage.content).toEqual([{ type: 'tool_use', id: 'toolu_fake2', name: 'get_weather', input: FAKE_TOOL_ARGUMENTS }]);
    expect(toolMessage.stop_reason).toBe('tool_use');
  });

  it('sends event: lines and a ping, as Anthropic does', async () => {
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(text).toContain('\n\nevent: ping\ndata: {"type":"ping"}\n\n');
    expect(text).toContain('"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0');
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
  });

  it('counts tokens', async () => {
    const counted = await anthropic().messages.countTokens({ model: 'claude-sonnet-4-5', system: 'be brief', messages: [{ role: 'user', content: 'one two three' }] });
    expect(counted).toEqual({ input_tokens: 5 });
    expect(fake.requests[0]?.path).toBe('/v1/messages/count_tokens');
  });

  it.each([
    ['error401', Anthropic.AuthenticationError, 401, 'authentication_error'],
    ['error403', Anthropic.PermissionDeniedError, 403, 'permission_error'],
    ['error429', Anthropic.RateLimitError, 429, 'rate_limit_error'],
    ['quotaExhausted', Anthropic.BadRequestError, 400, 'invalid_request_error'],
    ['error500', Anthropic.InternalServerError, 500, 'api_error'],
    ['overloaded', Anthropic.InternalServerError, 529, 'overloaded_error'],
  ] as const)('%s is an %p with status %d and type %s', async (fakeMode, errorClass, status, type) => {
    const failure = await anthropic().messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, mode(fakeMode))
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(errorClass);
    expect(failure).toMatchObject({ status, error: { type: 'error', error: { type } } });
  });

  it('refuses requests without x-api-key, anthropic-version or max_tokens, in Anthropic shape', async () => {
    const post = (headers: Record<string, string>, body: object) =>
      fetch(`${fake.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
        .then(async (response) => [response.status, await response.json()]);
    const valid = { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    expect(await post({ 'anthropic-version': '2023-06-01' }, valid))
      .toEqual([401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } }]);
    expect(await post({ 'x-api-key': KEY }, valid))
      .toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } }]);
    expect(await post({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }, { ...valid, max_tokens: undefined }))
      .toEqual([400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } }]);
  });

  it('ends a stream with an overloaded_error event the SDK throws (errorMidStream)', async () => {
    const stream = anthropic().messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, mode('errorMidStream'));
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const failure = await stream.finalMessage().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(failure).toMatchObject({ error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect(texts.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));
  });
});

describe('Gemini (@google/genai)', () => {
  // Jest's environment lacks undici's global dispatcher, which the SDK's default fetch path needs.
  const genai = () => new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta', fetch: globalThis.fetch } });
  const tools = [{ functionDeclarations: [WEATHER_TOOL, TIME_TOOL].map(({ parameters, ...fn }) => ({ ...fn, parametersJsonSchema: parameters })) }];

  it('answers a function call with a thought part and thoughtsTokenCount', async () => {
    fake.setMode('ok', { cachedTokens: 40 });
    const response = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'weather in Paris?',
      config: { tools, thinkingConfig: { includeThoughts: true }, systemInstruction: 'You know the weather' },
    });
    expect(response.functionCalls).toEqual([{ name: 'get_weather', args: FAKE_TOOL_ARGUMENTS }]);
    expect(response.candidates?.[0]?.content?.parts?.[0]).toEqual({ text: FAKE_THOUGHT, thought: true });
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    // 4 system words + 3 words + 40 cached; 10 for the call + 3 thoughts
    expect(response.usageMetadata).toMatchObject({
      promptTokenCount: 47,
      cachedContentTokenCount: 40,
      candidatesTokenCount: 10,
      thoughtsTokenCount: 3,
      totalTokenCount: 60,
    });
    expect(fake.requests[0]).toMatchObject({ dialect: 'gemini', path: '/v1beta/models/gemini-2.5-flash:generateContent' });
    expect(fake.requests[0]?.headers['x-goog-api-key']).toBe(KEY);
  });

  it('answers text after a functionResponse, and calls the function that toolConfig forces', async () => {
    const answered = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [
        { role: 'user', parts: [{ text: 'weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny' } } }] },
      ],
      config: { tools },
    });
    expect(answered.text).toBe(TEXT);
    expect(answered.usageMetadata?.promptTokenCount).toBe(5);

    const forced = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'time?',
      config: { tools, toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_time'] } } },
    });
    expect(forced.functionCalls?.[0]?.name).toBe('get_time');
  });

  it('streams text chunks with usage on the last one', async () => {
    const stream = await genai().models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'one two three',
      config: { maxOutputTokens: 4, thinkingConfig: { includeThoughts: true } },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.candidates?.[0]?.content?.parts).toEqual([{ text: FAKE_THOUGHT, thought: true }]);
    expect(chunks.slice(1).map((chunk) => chunk.text).join('')).toBe(FAKE_TEXT_PIECE.repeat(4));
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('MAX_TOKENS');
    expect(chunks.at(-1)?.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 4, thoughtsTokenCount: 3, totalTokenCount: 10 });
    expect(fake.requests[0]?.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('embeds several contents through batchEmbedContents', async () => {
    const response = await genai().models.embedContent({
      model: 'gemini-embedding-001',
      contents: ['first text', 'second one'],
      config: { outputDimensionality: 4 },
    });
    expect(response.embeddings?.map((embedding) => embedding.values)).toEqual([fakeEmbedding('first text', 4), fakeEmbedding('second one', 4)]);
    expect(fake.requests[0]?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
  });

  it('counts tokens', async () => {
    const counted = await genai().models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two three four' });
    expect(counted.totalTokens).toBe(4);
  });

  it('draws an image with text beside it for an image model, the aspect ratio asked recorded', async () => {
    const response = await genai().models.generateContent({
      model: 'gemini-2.5-flash-image',
      contents: 'a red fox',
      config: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '3:2' } },
    });
    expect(response.candidates?.[0]?.content?.parts).toEqual([{ text: FAKE_TEXT_PIECE }, { inlineData: { mimeType: 'image/png', data: FAKE_PNG.toString('base64') } }]);
    expect(response.data).toBe(FAKE_PNG.toString('base64'));
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.usageMetadata).toMatchObject({
      promptTokenCount: 3,
      candidatesTokenCount: 1 + FAKE_GEMINI_IMAGE_TOKENS,
      totalTokenCount: 3 + 1 + FAKE_GEMINI_IMAGE_TOKENS,
      candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: 1 }, { modality: 'IMAGE', tokenCount: FAKE_GEMINI_IMAGE_TOKENS }],
    });
    expect(fake.requests[0]).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash-image:generateContent',
      json: { generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '3:2' } } },
    });
  });

  it(`answers an image prompt containing "${FAKE_FLAGGED_WORD}" without an image (IMAGE_SAFETY)`, async () => {
    const response = await genai().models.generateContent({
      model: 'gemini-2.5-flash-image',
      contents: `${FAKE_FLAGGED_WORD} the fox`,
      config: { responseModalities: ['TEXT', 'IMAGE'] },
    });
    expect(response.candidates).toEqual([expect.objectContaining({ finishReason: 'IMAGE_SAFETY' })]);
    expect(response.candidates?.[0]?.content).toBeUndefined();
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 3, candidatesTokenCount: 0 });
  });

  it.each([
    ['several candidates', { candidateCount: 2 }, 'Multiple candidates is not enabled for models/gemini-2.5-flash-image'],
    ['an aspect ratio it does not draw', { imageConfig: { aspectRatio: '7:4' } }, 'Unsupported aspect ratio: 7:4'],
  ])('refuses %s for an image model with 400 INVALID_ARGUMENT', async (_, config, message) => {
    const failure = await genai().models.generateContent({
      model: 'gemini-2.5-flash-image',
      contents: 'a red fox',
      config: { responseModalities: ['TEXT', 'IMAGE'], ...config },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 400, message: expect.stringContaining(message) });
  });

  it.each([
    ['error400', 400],
    ['error401', 401],
    ['error429', 429],
    ['overloaded', 503],
  ] as const)('%s is an ApiError with status %d', async (fakeMode, status) => {
    fake.setMode(fakeMode);
    const failure = await genai().models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status });
  });

  it('ends a stream with an error chunk the SDK throws as an ApiError (errorMidStream)', async () => {
    fake.setMode('errorMidStream');
    const texts: string[] = [];
    const failure = await (async () => {
      const stream = await genai().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' });
      for await (const chunk of stream) texts.push(chunk.text ?? '');
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 503 });
    expect(texts.join('')).toBe(FAKE_TEXT_PIECE.repeat(2));
  });
});

describe('server tools (serverToolCalls)', () => {
  it('Anthropic: a web search tool is reported in usage.server_tool_use, in whole answers and streams', async () => {
    fake.setMode('ok', { serverToolCalls: 2 });
    const anthropic = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
    const params = { model: 'claude-sonnet-4-5', max_tokens: 100, tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const }], messages: [{ role: 'user' as const, content: 'news' }] };
    const message = await anthropic.messages.create(params);
    expect(message.content.map((block) => block.type)).toEqual(['text']);
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
    const streamed = await anthropic.messages.stream(params).finalMessage();
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
  });

  it('OpenAI Responses: one web_search_call item per search, streamed as OpenAI does', async () => {
    fake.setMode('ok', { serverToolCalls: 2 });
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${fake.url}/v1`, maxRetries: 0 });
    const whole = await openai.responses.create({ model: 'gpt-5', tools: [{ type: 'web_search' }], input: 'news' });
    expect(whole.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call', 'message']);
    const stream = openai.responses.stream({ model: 'gpt-5', tools: [{ type: 'web_search' }], input: 'news' });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    const response = await stream.finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call', 'message']);
    expect(types.slice(2, 8)).toEqual([
      'response.output_item.added', 'response.web_search_call.in_progress', 'response.web_search_call.searching',
      'response.web_search_call.completed', 'response.output_item.done', 'response.output_item.added',
    ]);
  });

  it('Gemini: grounding with Google Search leaves groundingMetadata on the finished candidate', async () => {
    fake.setMode('ok', { serverToolCalls: 2 });
    const genai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta', fetch: globalThis.fetch } });
    const response = await genai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'news', config: { tools: [{ googleSearch: {} }] } });
    expect(response.candidates?.[0]?.groundingMetadata?.webSearchQueries).toEqual(['fake query 1', 'fake query 2']);
    expect(response.candidates?.[0]?.groundingMetadata?.groundingChunks?.[0]?.web?.uri).toBe('https://example.com/fake');
  });
});

describe('faults on every route', () => {
  const routes = [
    { dialect: 'openai', path: '/v1/completions', body: { model: 'm', prompt: 'hi' } },
    { dialect: 'openai', path: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } },
    { dialect: 'openai', path: '/v1/embeddings', body: { model: 'm', input: 'hi' } },
    { dialect: 'openai', path: '/v1/responses', body: { model: 'm', input: 'hi' } },
    { dialect: 'anthropic', path: '/v1/messages', body: { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } },
    { dialect: 'anthropic', path: '/v1/messages/count_tokens', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } },
    { dialect: 'gemini', path: '/v1beta/models/m:generateContent', body: { contents: [{ parts: [{ text: 'hi' }] }] } },
    { dialect: 'gemini', path: '/v1beta/models/m:batchEmbedContents', body: { requests: [{ content: { parts: [{ text: 'hi' }] } }] } },
    { dialect: 'gemini', path: '/v1beta/models/m:countTokens', body: { contents: [{ parts: [{ text: 'hi' }] }] } },
  ] as const;
  const statuses: Partial<Record<FakeMode, Record<string, number>>> = {
    error400: { openai: 400, anthropic: 400, gemini: 400 },
    error401: { openai: 401, anthropic: 401, gemini: 401 },
    error403: { openai: 403, anthropic: 403, gemini: 403 },
    error429: { openai: 429, anthropic: 429, gemini: 429 },
    quotaExhausted: { openai: 429, anthropic: 400, gemini: 429 },
    error500: { openai: 500, anthropic: 500, gemini: 500 },
    overloaded: { openai: 503, anthropic: 529, gemini: 503 },
    errorMidStream: { openai: 503, anthropic: 529, gemini: 503 },
  };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'x-goog-api-key': KEY };

  it.each(routes)('$path answers each error mode in its provider shape', async ({ dialect, path, body }) => {
    for (const [fakeMode, byDialect] of Object.entries(statuses)) {
      const response = await fetch(`${fake.url}${path}`, { method: 'POST', headers, body: JSON.stringify({ ...body, fake_mode: fakeMode }) });
      const error: unknown = await response.json();
      expect([fakeMode, response.status]).toEqual([fakeMode, byDialect[dialect]]);
      if (dialect === 'anthropic') expect(error).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
      else if (dialect === 'gemini') expect(error).toMatchObject({ error: { code: response.status, status: expect.any(String) } });
      else expect(error).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
    }
    expect(fake.requests.map((request) => request.dialect)).toEqual(Object.keys(statuses).map(() => dialect));
  });

  it.each(routes)('$path breaks whole answers in the stream fault modes', async ({ path, body }) => {
    const send = (fakeMode: FakeMode) => fetch(`${fake.url}${path}`, { method: 'POST', headers, body: JSON.stringify({ ...body, fake_mode: fakeMode }) });
    const malformed = await send('malformedSse');
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow();
    await expect(send('reset')).rejects.toThrow();
    await expect(send('resetMidStream').then((response) => response.text())).rejects.toThrow();
    const ok = await send('ok');
    expect(ok.status).toBe(200);
    await ok.json();
  });

  it.each([
    ['/v1/completions', { model: 'm', prompt: 'hi', stream: true }],
    ['/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, reasoning_effort: 'low' }],
    ['/v1/responses', { model: 'm', input: 'hi', stream: true, reasoning: { effort: 'low' } }],
    ['/v1/messages', { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true, thinking: { type: 'enabled', budget_tokens: 10 } }],
    ['/v1beta/models/m:streamGenerateContent', { contents: [{ parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { includeThoughts: true } } }],
  ])('%s sends two text pieces before resetMidStream and hangMidStream strike', async (path, body) => {
    const pieces = (text: string) => text.split(FAKE_TEXT_PIECE).length - 1;
    const abort = new AbortController();
    const read = async (fakeMode: FakeMode) => {
      const response = await fetch(`${fake.url}${path}`, { method: 'POST', headers, body: JSON.stringify({ ...body, fake_mode: fakeMode }), signal: abort.signal });
      const reader = response.body?.getReader();
      let text = '';
      // A hung stream never ends: stop reading once it has sent its two pieces.
      while (reader && (pieces(text) < 2 || fakeMode === 'resetMidStream')) {
        const chunk = await reader?.read().catch(() => undefined);
        if (!chunk || chunk.done) break;
        text += Buffer.from(chunk.value).toString();
      }
      return text;
    };
    expect(pieces(await read('resetMidStream'))).toBe(2);
    expect(pieces(await read('hangMidStream'))).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [reset, hung] = fake.requests;
    expect(reset).toMatchObject({ closed: true, completed: false });
    expect(hung).toMatchObject({ closed: false, chunksSent: reset?.chunksSent });
    abort.abort();
  });

  it.each([
    ['/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }, '[DONE]'],
    ['/v1/responses', { model: 'm', input: 'hi', stream: true }, 'response.completed'],
    ['/v1/messages', { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true }, 'message_stop'],
    ['/v1beta/models/m:streamGenerateContent', { contents: [{ parts: [{ text: 'hi' }] }] }, 'finishReason'],
  ])('%s ends cleanly after two pieces, without its end marker, in endMidStream', async (path, body, marker) => {
    fake.setMode('endMidStream', { textPiece: ' piece' });
    const text = await (await fetch(`${fake.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).text();
    expect(text.split(' piece').length - 1).toBe(2);
    expect(text).not.toContain(marker);
    expect(fake.requests[0]).toMatchObject({ completed: true });
  });

  it('writes an oversized answer or stream event as it is read, and stops when the reader leaves', async () => {
    fake.setMode('oversized', { oversizedBytes: 3 * 1024 * 1024 + 5 });
    const whole = await fetch(`${fake.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(routes[1].body) });
    expect((await whole.arrayBuffer()).byteLength).toBe(3 * 1024 * 1024 + 5 + '{"padding":""}'.length);
    const stream = await fetch(`${fake.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ ...routes[1].body, stream: true }) });
    const text = await stream.text();
    expect(text.split('\n\n').filter((event) => event !== '').at(-1)).toMatch(/^data: \{"padding":"a{3145733}"\}$/);
    fake.setMode('oversized', { oversizedBytes: 100 * 1024 * 1024 });
    const abort = new AbortController();
    const left = await fetch(`${fake.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify(routes[1].body), signal: abort.signal });
    await left.body?.getReader().read();
    abort.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.requests.at(-1)).toMatchObject({ closed: true, completed: false });
  });

  it('echoes the key and an address in error400, as the relay masking tests need', async () => {
    for (const route of routes) {
      const response = await fetch(`${fake.url}${route.path}`, { method: 'POST', headers, body: JSON.stringify({ ...route.body, fake_mode: 'error400' }) });
      const text = await response.text();
      expect(text).toContain(KEY);
      expect(text).toContain('https://upstream.internal/');
    }
  });
});
