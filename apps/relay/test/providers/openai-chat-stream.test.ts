// Streamed chat both ways (docs/api.md 2.6, 2.7): OpenAI chunks read into internal events as they
// arrive, and internal events written as OpenAI chunks a chat client (and the official SDK) reads.
// The encoder's output read back by the decoder gives the same events: the relay relies on it.
import { AppError } from '@modelgate/errors';
import { Stream } from 'openai/core/streaming';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { StreamEventError } from '../../src/features/relay/event-stream';
import { SseParser } from '../../src/features/upstream/sse';
import type { ChatStreamEvent, ChatUsage } from '../../src/core/chat';
import { OpenAIChatChunkEncoder } from '../../src/dialects/openai/chunk-encoder';
import { OpenAIChatStreamDecoder } from '../../src/providers/openai/chat-stream';
import { usageToOpenAI } from '../../src/providers/openai/usage';

type Delta = ChatCompletionChunk.Choice.Delta;
/** DeepSeek and most compatible servers stream reasoning beside the content; OpenRouter calls it `reasoning`. */
type ReasoningDelta = Delta & { reasoning_content?: string; reasoning?: string };

const CREATED = 1_760_000_000;

function chunk(delta: ReasoningDelta, finish: ChatCompletionChunk.Choice['finish_reason'] = null, index = 0): ChatCompletionChunk {
  return {
    id: 'chatcmpl-7',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: 'gpt-4o-2024-08-06',
    system_fingerprint: 'fp_1',
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
  };
}

function sse(...items: (object | string)[]): string {
  return items.map((item) => `data: ${typeof item === 'string' ? item : JSON.stringify(item)}\n\n`).join('');
}

/** Feeds SSE text to a decoder in small byte slices, as a network would. */
function decodeAll(text: string, decoder = new OpenAIChatStreamDecoder(), sliceBytes = 7): ChatStreamEvent[] {
  const parser = new SseParser();
  const bytes = Buffer.from(text);
  const events: ChatStreamEvent[] = [];
  for (let offset = 0; offset < bytes.length; offset += sliceBytes) {
    for (const event of parser.push(bytes.subarray(offset, offset + sliceBytes))) events.push(...decoder.decode(event));
  }
  for (const event of parser.end()) events.push(...decoder.decode(event));
  return events;
}

const USAGE_CHUNK: ChatCompletionChunk = {
  ...chunk({}),
  choices: [],
  usage: {
    prompt_tokens: 50,
    completion_tokens: 30,
    total_tokens: 80,
    prompt_tokens_details: { cached_tokens: 32 },
    completion_tokens_details: { reasoning_tokens: 10 },
  },
};

describe('OpenAIChatStreamDecoder', () => {
  it('reads a realistic stream: reasoning, text, tool calls split across chunks, usage, [DONE]', () => {
    const decoder = new OpenAIChatStreamDecoder();
    const text = sse(
      chunk({ role: 'assistant', content: '', refusal: null }),
      chunk({ content: null, reasoning_content: 'Need weather.' }),
      chunk({ content: 'Hello' }),
      chunk({ content: ' world' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      USAGE_CHUNK,
      '[DONE]',
    );
    expect(decodeAll(text, decoder)).toEqual<ChatStreamEvent[]>([
      { type: 'start', id: 'chatcmpl-7', created: CREATED },
      { type: 'reasoning', choice: 0, text: 'Need weather.' },
      { type: 'text', choice: 0, text: 'Hello' },
      { type: 'text', choice: 0, text: ' world' },
      { type: 'tool_call', choice: 0, index: 0, id: 'call_a', name: 'weather', arguments: '' },
      { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"city":' },
      { type: 'tool_call', choice: 0, index: 1, id: 'call_b', name: 'time', arguments: '{}' },
      { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '"Paris"}' },
      { type: 'finish', choice: 0, reason: 'tool_calls' },
      { type: 'usage', usage: { promptTokens: 50, completionTokens: 30, cachedTokens: 32, cacheWriteTokens: 0, reasoningTokens: 10 } },
    ]);
    expect(decoder.done).toBe(true);
  });

  it.each<[string, string, ChatStreamEvent[]]>([
    ['keep-alive comments', ': ping\n\n', []],
    [
      'OpenRouter-style `reasoning`',
      sse(chunk({ reasoning: 'hmm' })),
      [
        { type: 'start', id: 'chatcmpl-7', created: CREATED },
        { type: 'reasoning', choice: 0, text: 'hmm' },
      ],
    ],
    [
      'a refusal, shown as text',
      sse(chunk({ refusal: 'No.' }, 'stop')),
      [
        { type: 'start', id: 'chatcmpl-7', created: CREATED },
        { type: 'text', choice: 0, text: 'No.' },
        { type: 'finish', choice: 0, reason: 'stop' },
      ],
    ],
    [
      'servers that repeat the id and name on every tool chunk',
      sse(
        chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a"' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: ':1}' } }] }),
      ),
      [
        { type: 'start', id: 'chatcmpl-7', created: CREATED },
        { type: 'tool_call', choice: 0, index: 0, id: 'c1', name: 'f', arguments: '{"a"' },
        { type: 'tool_call_arguments', choice: 0, index: 0, arguments: ':1}' },
      ],
    ],
    [
      "Azure's first chunk without an id (prompt filter results)",
      sse({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [] }, chunk({ content: 'Hi' })),
      [
        { type: 'start', id: 'chatcmpl-7', created: CREATED },
        { type: 'text', choice: 0, text: 'Hi' },
      ],
    ],
    [
      'two choices (n = 2), interleaved',
      sse(chunk({ content: 'A' }, null, 0), chunk({ content: 'B' }, null, 1), chunk({}, 'stop', 1), chunk({}, 'length', 0)),
      [
        { type: 'start', id: 'chatcmpl-7', created: CREATED },
        { type: 'text', choice: 0, text: 'A' },
        { type: 'text', choice: 1, text: 'B' },
        { type: 'finish', choice: 1, reason: 'stop' },
        { type: 'finish', choice: 0, reason: 'length' },
      ],
    ],
  ])('reads %s', (_, text, expected) => {
    expect(decodeAll(text)).toEqual(expected);
  });

  it.each([
    ['an error object', sse({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } }), 'upstream error: Rate limit reached'],
    ['an error string', sse({ error: 'overloaded' }), 'upstream error: overloaded'],
    ['an error without a message', sse({ error: { code: 500 } }), 'the upstream reported an error'],
    ['text that is not JSON', 'data: {"id": "chatcmpl-7", \n\n', 'the upstream sent a malformed event'],
    ['JSON that is not an object', sse('[1,2]'), 'the upstream sent a malformed event'],
    ['choices that are not a list', sse({ id: 'x', choices: {} }), 'the upstream sent a malformed event'],
    ['a choice that is not an object', sse({ id: 'x', choices: [5] }), 'the upstream sent a malformed event'],
    ['tool calls that are not a list', sse({ id: 'x', choices: [{ index: 0, delta: { tool_calls: 'f' } }] }), 'the upstream sent a malformed event'],
  ])('fails the stream on %s', (_, text, message) => {
    const decode = () => decodeAll(sse(chunk({ content: 'partial' })) + text);
    expect(decode).toThrow(StreamEventError);
    expect(decode).toThrow(message);
  });
});

const USAGE: ChatUsage = { promptTokens: 50, completionTokens: 30, cachedTokens: 32, cacheWriteTokens: 0, reasoningTokens: 10 };

const TOOL_EVENTS: ChatStreamEvent[] = [
  { type: 'start', id: 'chatcmpl-msg_01', created: CREATED },
  { type: 'text', choice: 0, text: 'Checking.' },
  { type: 'tool_call', choice: 0, index: 0, id: 'toolu_1', name: 'weather', arguments: '' },
  { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"city":"Paris"}' },
  { type: 'finish', choice: 0, reason: 'tool_calls' },
];

const EVENT_SEQUENCES: [string, ChatStreamEvent[]][] = [
  ['text only', [{ type: 'start', id: 'chatcmpl-1', created: CREATED }, { type: 'text', choice: 0, text: 'Hi' }, { type: 'finish', choice: 0, reason: 'stop' }]],
  [
    'reasoning then text',
    [
      { type: 'start', id: 'chatcmpl-2', created: CREATED },
      { type: 'reasoning', choice: 0, text: 'Let me think' },
      { type: 'reasoning', choice: 0, text: ' about it.' },
      { type: 'text', choice: 0, text: 'Done.' },
      { type: 'finish', choice: 0, reason: 'length' },
    ],
  ],
  ['text and a tool call', TOOL_EVENTS],
  [
    'two tool calls with whole arguments',
    [
      { type: 'start', id: 'chatcmpl-3', created: CREATED },
      { type: 'tool_call', choice: 0, index: 0, id: 'a', name: 'f', arguments: '{}' },
      { type: 'tool_call', choice: 0, index: 1, id: 'b', name: 'g', arguments: '{"x":1}' },
      { type: 'finish', choice: 0, reason: 'tool_calls' },
    ],
  ],
  [
    'two choices',
    [
      { type: 'start', id: 'chatcmpl-4', created: CREATED },
      { type: 'text', choice: 0, text: 'A' },
      { type: 'text', choice: 1, text: 'B' },
      { type: 'finish', choice: 0, reason: 'stop' },
      { type: 'finish', choice: 1, reason: 'content_filter' },
    ],
  ],
];

function encoder(includeUsage = true) {
  return new OpenAIChatChunkEncoder({ model: 'claude-sonnet-4-5', requestId: 'req-1', includeUsage });
}

function chunksOf(text: string): unknown[] {
  return new SseParser()
    .push(Buffer.from(text))
    .flatMap((event) => (event.data === null || event.data === '[DONE]' ? [] : [JSON.parse(event.data) as unknown]));
}

/** What the official SDK assembles from a stream, as an application using it would see it. */
async function throughSdk(text: string) {
  const stream = Stream.fromSSEResponse<ChatCompletionChunk>(new Response(text), new AbortController());
  return ChatCompletionStream.fromReadableStream(stream.toReadableStream()).finalChatCompletion();
}

describe('OpenAIChatChunkEncoder', () => {
  it.each(EVENT_SEQUENCES)('writes events the decoder reads back unchanged: %s', (_, events) => {
    const writer = encoder();
    const text = events.map((event) => writer.encode(event)).join('') + writer.tail(USAGE);
    const decoder = new OpenAIChatStreamDecoder();
    expect(decodeAll(text, decoder)).toEqual([...events, { type: 'usage', usage: USAGE }]);
    expect(decoder.done).toBe(true);
  });

  it("writes chunks shaped exactly like OpenAI's", () => {
    const writer = encoder();
    const text = TOOL_EVENTS.map((event) => writer.encode(event)).join('') + writer.tail(USAGE);
    const envelope = { id: 'chatcmpl-msg_01', object: 'chat.completion.chunk', created: CREATED, model: 'claude-sonnet-4-5' } as const;
    const choice = (delta: Delta, finish: ChatCompletionChunk.Choice['finish_reason'] = null) => ({
      ...envelope,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
    });
    const expected: ChatCompletionChunk[] = [
      choice({ role: 'assistant', content: '' }),
      choice({ content: 'Checking.' }),
      choice({ tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }),
      choice({}, 'tool_calls'),
      { ...envelope, choices: [], usage: usageToOpenAI(USAGE) },
    ];
    expect(chunksOf(text)).toEqual(expected);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('is read by the official SDK into the complete answer, tool call ids and usage included', async () => {
    const writer = encoder();
    const text = TOOL_EVENTS.map((event) => writer.encode(event)).join('') + writer.tail(USAGE);
    const completion = await throughSdk(text);
    expect(completion.id).toBe('chatcmpl-msg_01');
    expect(completion.choices[0]?.message).toMatchObject({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(32);
  });

  it('without a start event, the first content chunk carries the role and an id of the request', () => {
    const writer = encoder(false);
    const [first] = chunksOf(writer.encode({ type: 'text', choice: 0, text: 'Hi' }));
    expect(first).toMatchObject({ id: 'chatcmpl-req-1', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' } }] });
    expect(first).not.toHaveProperty('usage');
    const [second] = chunksOf(writer.encode({ type: 'text', choice: 0, text: '!' }));
    expect(second).toMatchObject({ choices: [{ delta: { content: '!' } }] });
    expect(second).not.toHaveProperty('choices.0.delta.role');
  });

  it('writes nothing for events a chat client has no field for', () => {
    const writer = encoder();
    expect(writer.encode({ type: 'reasoning_signature', choice: 0, signature: 'sig' })).toBe('');
    expect(writer.encode({ type: 'redacted_reasoning', choice: 0, data: 'x' })).toBe('');
    expect(writer.encode({ type: 'usage', usage: { promptTokens: 5 } })).toBe('');
  });

  it('sends the usage chunk only when the client asked for it, and always [DONE]', () => {
    expect(encoder(false).tail(USAGE)).toBe('data: [DONE]\n\n');
    expect(chunksOf(encoder(true).tail(USAGE))).toEqual([expect.objectContaining({ choices: [], usage: expect.objectContaining({ total_tokens: 80 }) })]);
  });

  it('ends a broken stream with an OpenAI error event and [DONE], which the SDK raises', async () => {
    const writer = encoder();
    const text = writer.encode({ type: 'text', choice: 0, text: 'Hel' }) + writer.errorTail(new AppError('upstream_error', 'upstream stream failed'));
    const error = { message: 'upstream stream failed (request id: req-1)', type: 'upstream_error', param: null, code: 'upstream_error' };
    expect(text.endsWith(`data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`)).toBe(true);
    await expect(throughSdk(text)).rejects.toThrow('upstream stream failed');
  });

  it('keeps what was delivered and the usage reported, for billing when the provider reported nothing', () => {
    const writer = encoder();
    for (const event of TOOL_EVENTS) writer.encode(event);
    writer.encode({ type: 'reasoning', choice: 0, text: 'hm' });
    writer.encode({ type: 'usage', usage: { promptTokens: 40, cachedTokens: 8 } });
    writer.encode({ type: 'usage', usage: { promptTokens: 41, completionTokens: 12 } });
    expect(writer.deliveredText()).toEqual(['Checking.', 'weather', '', '{"city":"Paris"}', 'hm']);
    expect(writer.usage()).toEqual({ promptTokens: 41, cachedTokens: 8, completionTokens: 12 });
  });
});
