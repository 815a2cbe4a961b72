// Internal stream events written as Anthropic's SSE sequence, for a /v1/messages client another
// provider answers (docs/api.md 2.9): the exact events, the official SDK's accumulator reading them
// into the Message chatResponseToAnthropic writes, and the Anthropic decoder reading them back.
import { APIError } from '@anthropic-ai/sdk';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { AppError } from '@modelgate/errors';
import { SseParser } from '../../src/features/upstream/sse';
import { chatResponseToAnthropic } from '../../src/dialects/anthropic/from-internal';
import { AnthropicEventEncoder } from '../../src/dialects/anthropic/event-encoder';
import { anthropicStreamDecoder } from '../../src/providers/anthropic/stream';
import type { ChatResponse, ChatStreamEvent, ChatUsage } from '../../src/core/chat';

const MODEL = 'claude-sonnet-4-5';
const USAGE: ChatUsage = { promptTokens: 1200, completionTokens: 80, cachedTokens: 1000, cacheWriteTokens: 150, reasoningTokens: 0 };
const ANTHROPIC_USAGE = { input_tokens: 50, cache_creation_input_tokens: 150, cache_read_input_tokens: 1000, output_tokens: 80 };

function encoder(): AnthropicEventEncoder {
  return new AnthropicEventEncoder({ model: MODEL, requestId: 'req-7', promptTokens: 1234 });
}

/** Everything the encoder writes for `events`, then its tail. */
function written(events: ChatStreamEvent[], usage: ChatUsage = USAGE, into = encoder()): string {
  return events.map((event) => into.encode(event)).join('') + into.tail(usage);
}

/** The SSE events of `text`, each as [event name, parsed data]; asserts each `event:` line repeats the data's type. */
function sseEvents(text: string): [string, Record<string, unknown>][] {
  const parser = new SseParser();
  return [...parser.push(Buffer.from(text)), ...parser.end()].map((event) => {
    const data = JSON.parse(event.data ?? 'null') as Record<string, unknown>;
    expect(event.raw).toBe(`event: ${event.event}\ndata: ${event.data}\n\n`);
    expect(data.type).toBe(event.event);
    return [event.event ?? '', data];
  });
}

const START: ChatStreamEvent = { type: 'start', id: 'chatcmpl-9', created: 1_760_000_000 };

function messageStart(id = 'msg_chatcmpl-9'): [string, Record<string, unknown>][] {
  return [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1234, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
        },
      },
    ],
    ['ping', { type: 'ping' }],
  ];
}

function end(stopReason: string, index?: number): [string, Record<string, unknown>][] {
  return [
    ...(index === undefined ? [] : [['content_block_stop', { type: 'content_block_stop', index }] as [string, Record<string, unknown>]]),
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: ANTHROPIC_USAGE }],
    ['message_stop', { type: 'message_stop' }],
  ];
}

const blockStart = (index: number, block: object): [string, Record<string, unknown>] => [
  'content_block_start',
  { type: 'content_block_start', index, content_block: block },
];
const blockDelta = (index: number, delta: object): [string, Record<string, unknown>] => [
  'content_block_delta',
  { type: 'content_block_delta', index, delta },
];
const blockStop = (index: number): [string, Record<string, unknown>] => ['content_block_stop', { type: 'content_block_stop', index }];

describe('AnthropicEventEncoder: the event sequence', () => {
  it.each<[string, ChatStreamEvent[], [string, Record<string, unknown>][]]>([
    [
      'text in pieces',
      [START, { type: 'text', choice: 0, text: 'Hel' }, { type: 'text', choice: 0, text: 'lo' }, { type: 'finish', choice: 0, reason: 'stop' }],
      [
        ...messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        blockDelta(0, { type: 'text_delta', text: 'Hel' }),
        blockDelta(0, { type: 'text_delta', text: 'lo' }),
        ...end('end_turn', 0),
      ],
    ],
    [
      'thinking closed by its signature, then text',
      [
        START,
        { type: 'reasoning', choice: 0, text: 'Let me ' },
        { type: 'reasoning', choice: 0, text: 'think.' },
        { type: 'reasoning_signature', choice: 0, signature: 'EqQBCkYI' },
        { type: 'text', choice: 0, text: 'Done.' },
        { type: 'finish', choice: 0, reason: 'length' },
      ],
      [
        ...messageStart(),
        blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
        blockDelta(0, { type: 'thinking_delta', thinking: 'Let me ' }),
        blockDelta(0, { type: 'thinking_delta', thinking: 'think.' }),
        blockDelta(0, { type: 'signature_delta', signature: 'EqQBCkYI' }),
        blockStop(0),
        blockStart(1, { type: 'text', text: '' }),
        blockDelta(1, { type: 'text_delta', text: 'Done.' }),
        ...end('max_tokens', 1),
      ],
    ],
    [
      "unsigned reasoning (another provider's) closed when text begins, and reasoning after text in a block of its own",
      [START, { type: 'reasoning', choice: 0, text: 'A' }, { type: 'text', choice: 0, text: 'B' }, { type: 'reasoning', choice: 0, text: 'C' }],
      [
        ...messageStart(),
        blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
        blockDelta(0, { type: 'thinking_delta', thinking: 'A' }),
        blockStop(0),
        blockStart(1, { type: 'text', text: '' }),
        blockDelta(1, { type: 'text_delta', text: 'B' }),
        blockStop(1),
        blockStart(2, { type: 'thinking', thinking: '', signature: '' }),
        blockDelta(2, { type: 'thinking_delta', thinking: 'C' }),
        ...end('end_turn', 2),
      ],
    ],
    [
      "a signature with no reasoning open (Gemini's) as an empty thinking block",
      [START, { type: 'text', choice: 0, text: 'Hi' }, { type: 'reasoning_signature', choice: 0, signature: 'gem' }],
      [
        ...messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        blockDelta(0, { type: 'text_delta', text: 'Hi' }),
        blockStop(0),
        blockStart(1, { type: 'thinking', thinking: '', signature: '' }),
        blockDelta(1, { type: 'signature_delta', signature: 'gem' }),
        blockStop(1),
        ...end('end_turn'),
      ],
    ],
    [
      'tool calls with their argument pieces, each its own block',
      [
        START,
        { type: 'text', choice: 0, text: 'Checking.' },
        { type: 'tool_call', choice: 0, index: 0, id: 'call_a', name: 'get_weather', arguments: '' },
        { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"city":' },
        { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '"Paris"}' },
        { type: 'tool_call', choice: 0, index: 1, id: 'call_b', name: 'get_time', arguments: '{}' },
        { type: 'finish', choice: 0, reason: 'tool_calls' },
      ],
      [
        ...messageStart(),
        blockStart(0, { type: 'text', text: '' }),
        blockDelta(0, { type: 'text_delta', text: 'Checking.' }),
        blockStop(0),
        blockStart(1, { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} }),
        blockDelta(1, { type: 'input_json_delta', partial_json: '{"city":' }),
        blockDelta(1, { type: 'input_json_delta', partial_json: '"Paris"}' }),
        blockStop(1),
        blockStart(2, { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} }),
        blockDelta(2, { type: 'input_json_delta', partial_json: '{}' }),
        ...end('tool_use', 2),
      ],
    ],
    [
      "interleaved arguments on their own call's block; arguments of an unknown call as nothing",
      [
        START,
        { type: 'tool_call', choice: 0, index: 0, id: 'call_a', name: 'a', arguments: '{"x":' },
        { type: 'tool_call', choice: 0, index: 1, id: 'call_b', name: 'b', arguments: '{}' },
        { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '1}' },
        { type: 'tool_call_arguments', choice: 0, index: 5, arguments: '{}' },
      ],
      [
        ...messageStart(),
        blockStart(0, { type: 'tool_use', id: 'call_a', name: 'a', input: {} }),
        blockDelta(0, { type: 'input_json_delta', partial_json: '{"x":' }),
        blockStop(0),
        blockStart(1, { type: 'tool_use', id: 'call_b', name: 'b', input: {} }),
        blockDelta(1, { type: 'input_json_delta', partial_json: '{}' }),
        blockDelta(0, { type: 'input_json_delta', partial_json: '1}' }),
        // no finish came: tool_use after a tool call
        ...end('tool_use', 1),
      ],
    ],
    [
      'redacted reasoning as a redacted_thinking block opened and closed at once',
      [START, { type: 'redacted_reasoning', choice: 0, data: 'EmwKAhgB' }, { type: 'text', choice: 0, text: 'Ok' }, { type: 'finish', choice: 0, reason: 'content_filter' }],
      [
        ...messageStart(),
        blockStart(0, { type: 'redacted_thinking', data: 'EmwKAhgB' }),
        blockStop(0),
        blockStart(1, { type: 'text', text: '' }),
        blockDelta(1, { type: 'text_delta', text: 'Ok' }),
        ...end('refusal', 1),
      ],
    ],
    [
      'message_start first even when content comes before the start (its id from the request then)',
      [{ type: 'text', choice: 0, text: 'x' }, START],
      [...messageStart('msg_req-7'), blockStart(0, { type: 'text', text: '' }), blockDelta(0, { type: 'text_delta', text: 'x' }), ...end('end_turn', 0)],
    ],
    [
      'other choices, empty pieces and a second start as nothing',
      [
        START,
        { type: 'text', choice: 1, text: 'other' },
        { type: 'tool_call', choice: 1, index: 0, id: 'c', name: 'n', arguments: '' },
        { type: 'finish', choice: 1, reason: 'length' },
        { type: 'text', choice: 0, text: '' },
        { type: 'reasoning', choice: 0, text: '' },
        { type: 'start', id: 'other', created: 1 },
      ],
      [...messageStart(), ...end('end_turn')],
    ],
    ['an empty stream as a complete empty message', [], [...messageStart('msg_req-7'), ...end('end_turn')]],
  ])('writes %s', (_name, events, expected) => {
    expect(sseEvents(written(events))).toEqual(expected);
  });

  it('writes each event at once: the first text piece is out before the next arrives', () => {
    const into = encoder();
    expect(into.encode(START)).toContain('event: message_start');
    expect(into.encode({ type: 'text', choice: 0, text: 'Hel' })).toContain('"text":"Hel"');
    expect(into.encode({ type: 'usage', usage: { promptTokens: 3 } })).toBe('');
    expect(into.encode({ type: 'finish', choice: 0, reason: 'stop' })).toBe('');
  });

  it('keeps the usage reported (later values replace earlier ones) and every generated piece', () => {
    const into = encoder();
    written(
      [
        START,
        { type: 'usage', usage: { promptTokens: 10, cachedTokens: 4 } },
        { type: 'reasoning', choice: 0, text: 'Think' },
        { type: 'text', choice: 0, text: 'Say' },
        { type: 'tool_call', choice: 0, index: 0, id: 'c', name: 'lookup', arguments: '{"q":' },
        { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '"x"}' },
        { type: 'text', choice: 1, text: 'not sent' },
        { type: 'usage', usage: { promptTokens: 12, completionTokens: 9 } },
      ],
      USAGE,
      into,
    );
    expect(into.usage()).toEqual({ promptTokens: 12, cachedTokens: 4, completionTokens: 9 });
    expect(into.deliveredText()).toEqual(['Think', 'Say', 'lookup', '{"q":', '"x"}']);
  });

  it.each<[number, string]>([
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [429, 'rate_limit_error'],
  ])('writes an upstream failure (%i) as an error event, which the SDK raises as %s', async (status, type) => {
    const into = encoder();
    const text = into.encode(START) + into.encode({ type: 'text', choice: 0, text: 'Hel' });
    const tail = into.errorTail(new AppError('upstream_error', 'the upstream failed', { status }));
    expect(tail).toBe(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: 'the upstream failed' } })}\n\n`);
    const error = await sdkFinalMessage(text + tail).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).type).toBe(type);
  });
});

/** What the official SDK's stream helper accumulates from the bytes. */
function sdkFinalMessage(text: string): Promise<unknown> {
  const events = Stream.fromSSEResponse(new Response(text), new AbortController());
  return MessageStream.fromReadableStream(events.toReadableStream()).finalMessage();
}

describe('AnthropicEventEncoder read by its clients', () => {
  const answer: ChatResponse = {
    id: 'chatcmpl-9',
    created: 1_760_000_000,
    choices: [
      {
        index: 0,
        content: [
          { type: 'reasoning', text: 'The user wants weather. ', signature: 'EqQBCkYI' },
          { type: 'redacted_reasoning', data: 'EmwKAhgB' },
          { type: 'text', text: 'Let me check the weather in Paris.' },
          { type: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
          { type: 'tool_call', id: 'call_b', name: 'get_time', arguments: '' },
        ],
        finishReason: 'tool_calls',
      },
    ],
  };
  /** The same answer as a provider streams it: pieces of each part. */
  const events: ChatStreamEvent[] = [
    START,
    { type: 'usage', usage: { promptTokens: 1200 } },
    { type: 'reasoning', choice: 0, text: 'The user wants ' },
    { type: 'reasoning', choice: 0, text: 'weather. ' },
    { type: 'reasoning_signature', choice: 0, signature: 'EqQBCkYI' },
    { type: 'redacted_reasoning', choice: 0, data: 'EmwKAhgB' },
    { type: 'text', choice: 0, text: 'Let me check ' },
    { type: 'text', choice: 0, text: 'the weather in Paris.' },
    { type: 'tool_call', choice: 0, index: 0, id: 'call_a', name: 'get_weather', arguments: '' },
    { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"city":' },
    { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '"Paris","unit":"c"}' },
    { type: 'tool_call', choice: 0, index: 1, id: 'call_b', name: 'get_time', arguments: '' },
    { type: 'finish', choice: 0, reason: 'tool_calls' },
    { type: 'usage', usage: { completionTokens: 80 } },
  ];

  it("gives the SDK's MessageStream the Message chatResponseToAnthropic writes for the same answer", async () => {
    const expected = chatResponseToAnthropic(answer, MODEL, USAGE);
    expect(expected.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'text', 'tool_use', 'tool_use']);
    // `parsed_output` is the SDK's own (its structured-output helper sets it on every final message).
    const { parsed_output: parsedOutput, ...message } = (await sdkFinalMessage(written(events))) as Record<string, unknown>;
    expect(parsedOutput).toBeNull();
    expect(message).toEqual(expected);
  });

  it('reads back through the Anthropic decoder as the same events', () => {
    const decoder = anthropicStreamDecoder();
    const parser = new SseParser();
    const decoded = parser.push(Buffer.from(written(events))).flatMap((event) => decoder.decode(event));
    expect(decoder.done).toBe(true);
    const content = decoded.filter((event) => event.type !== 'usage' && event.type !== 'start' && event.type !== 'finish');
    expect(content).toEqual(events.filter((event) => event.type !== 'usage' && event.type !== 'start' && event.type !== 'finish'));
    expect(decoded.find((event) => event.type === 'finish')).toEqual({ type: 'finish', choice: 0, reason: 'tool_calls' });
    expect(decoded.at(-1)).toEqual({ type: 'usage', usage: { ...USAGE, reasoningTokens: 0 } });
  });
});
