import { StreamEventError } from '../../src/features/relay/event-stream';
import { SseParser } from '../../src/features/upstream/sse';
import { anthropicProvider } from '../../src/providers/anthropic';
import type { ChatStreamEvent } from '../../src/core/chat';
import type { ChatStreamDecoder } from '../../src/core/provider';
import { thrownBy } from '../thrown';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const NOW_MS = 1_760_000_000_000;

/** Anthropic SSE as sent: `event:` and `data:` lines, each event closed by a blank line. */
function sse(events: [string, unknown][]): string {
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

/** Every internal event of a byte stream, fed in small chunks, plus what each upstream event gave. */
function decodeAll(decoder: ChatStreamDecoder, text: string): ChatStreamEvent[][] {
  const parser = new SseParser();
  const bytes = Buffer.from(text);
  const perEvent: ChatStreamEvent[][] = [];
  for (let i = 0; i < bytes.length; i += 7) {
    for (const event of parser.push(bytes.subarray(i, i + 7))) perEvent.push(decoder.decode(event));
  }
  for (const event of parser.end()) perEvent.push(decoder.decode(event));
  return perEvent;
}

/** A recorded stream (extended thinking, then text, then two tool calls), shaped as Anthropic sends it. */
const RECORDED = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: {
        id: 'msg_01FHkVbWQSGxRBXGXyHUjTXb',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 472, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, output_tokens: 2 },
      },
    },
  ],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }],
  ['ping', { type: 'ping' }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants the weather ' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'in two cities.' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Let me check ' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'caf\u00e9 weather \u2615.' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 1 }],
  [
    'content_block_start',
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} } },
  ],
  ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location": "San Fra' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ncisco, CA"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 2 }],
  ['content_block_start', { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: {} } }],
  ['content_block_delta', { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"location": "Paris"}' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 3 }],
  [
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 472, cache_creation_input_tokens: 0, cache_read_input_tokens: 2048, output_tokens: 89 },
    },
  ],
  ['message_stop', { type: 'message_stop' }],
]);

describe('Anthropic chat stream', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW_MS));
  afterEach(() => jest.restoreAllMocks());

  it('turns a recorded stream into the internal events, each as its upstream event arrives', () => {
    const decoder = anthropicProvider.chat(TEST_CHANNEL, 'm').stream();
    const perEvent = decodeAll(decoder, `${RECORDED}: a trailing comment\n\n`);
    const usage = { promptTokens: 2520, cachedTokens: 2048, cacheWriteTokens: 0, reasoningTokens: 0 };
    expect(perEvent).toEqual([
      [
        { type: 'start', id: 'msg_01FHkVbWQSGxRBXGXyHUjTXb', created: NOW_MS / 1000 },
        // message_start's output_tokens (2) is a placeholder, not a count.
        { type: 'usage', usage },
      ],
      [],
      [],
      [{ type: 'reasoning', choice: 0, text: 'The user wants the weather ' }],
      [{ type: 'reasoning', choice: 0, text: 'in two cities.' }],
      [{ type: 'reasoning_signature', choice: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' }],
      [],
      [],
      [{ type: 'text', choice: 0, text: 'Let me check ' }],
      [{ type: 'text', choice: 0, text: 'caf\u00e9 weather \u2615.' }],
      [],
      [{ type: 'tool_call', choice: 0, index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '' }],
      [],
      [{ type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"location": "San Fra' }],
      [{ type: 'tool_call_arguments', choice: 0, index: 0, arguments: 'ncisco, CA"}' }],
      [],
      [{ type: 'tool_call', choice: 0, index: 1, id: 'toolu_02', name: 'get_weather', arguments: '' }],
      [{ type: 'tool_call_arguments', choice: 0, index: 1, arguments: '{"location": "Paris"}' }],
      [],
      [
        { type: 'finish', choice: 0, reason: 'tool_calls' },
        { type: 'usage', usage: { ...usage, completionTokens: 89 } },
      ],
      [],
      [],
    ]);
    expect(decoder.done).toBe(true);
  });

  it('is not done before message_stop', () => {
    const decoder = anthropicProvider.chat(TEST_CHANNEL, 'm').stream();
    decodeAll(decoder, RECORDED.slice(0, RECORDED.indexOf('event: message_stop')));
    expect(decoder.done).toBe(false);
  });

  it.each<[string, [string, unknown][], ChatStreamEvent[]]>([
    [
      'text, thinking and tool input already in their first block',
      [
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: 'Hmm.', signature: 'sig' } }],
        ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'text', text: 'Hello' } }],
        ['content_block_start', { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } } }],
      ],
      [
        { type: 'reasoning', choice: 0, text: 'Hmm.' },
        { type: 'reasoning_signature', choice: 0, signature: 'sig' },
        { type: 'text', choice: 0, text: 'Hello' },
        { type: 'tool_call', choice: 0, index: 0, id: 't1', name: 'f', arguments: '{"a":1}' },
      ],
    ],
    [
      'redacted thinking',
      [['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } }]],
      [{ type: 'redacted_reasoning', choice: 0, data: 'EmwKAhgB' }],
    ],
    [
      'a server tool and its input, which are not the client\'s, and citations',
      [
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }],
        ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } }],
        ['content_block_delta', { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation: { type: 'char_location' } } }],
      ],
      [],
    ],
    [
      'a stop reason for each finish',
      [
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 5 } }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null } }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } }],
      ],
      [
        { type: 'finish', choice: 0, reason: 'length' },
        { type: 'usage', usage: { completionTokens: 5, reasoningTokens: 0 } },
        { type: 'finish', choice: 0, reason: 'content_filter' },
        { type: 'finish', choice: 0, reason: 'stop' },
      ],
    ],
    [
      'usage whose later cumulative values replace earlier ones field by field',
      [
        ['message_start', { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 10, cache_creation_input_tokens: 100, output_tokens: 1 } } }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: null }, usage: { input_tokens: null, cache_read_input_tokens: 40, output_tokens: 9 } }],
      ],
      [
        { type: 'start', id: 'msg_1', created: NOW_MS / 1000 },
        { type: 'usage', usage: { promptTokens: 110, cachedTokens: 0, cacheWriteTokens: 100, reasoningTokens: 0 } },
        { type: 'usage', usage: { promptTokens: 150, cachedTokens: 40, cacheWriteTokens: 100, completionTokens: 9, reasoningTokens: 0 } },
      ],
    ],
    [
      'no unbelievable counts',
      [
        ['message_start', { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: -5, output_tokens: 1 } } }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 2 ** 40 } }],
      ],
      [
        { type: 'start', id: 'msg_1', created: NOW_MS / 1000 },
        { type: 'usage', usage: { reasoningTokens: 0 } },
        { type: 'usage', usage: { reasoningTokens: 0 } },
      ],
    ],
    ['nothing for events without data, pings and event types added later', [['ping', { type: 'ping' }], ['future', { type: 'future_event' }], ['x', { no: 'type' }]], []],
  ])('reads %s', (_name, events, expected) => {
    expect(decodeAll(anthropicProvider.chat(TEST_CHANNEL, 'm').stream(), `: keep-alive\n\n${sse(events)}`).flat()).toEqual(expected);
  });

  it.each<[string, string, string]>([
    [
      'an error event, with its message',
      sse([['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]),
      'upstream error: Overloaded',
    ],
    ['an error event without a message', sse([['error', { type: 'error', error: {} }]]), 'the upstream reported an error'],
    ['data that is not JSON', 'event: message_start\ndata: {"type": "message_st\n\n', 'the upstream sent a malformed event'],
    ['data that is not an object', 'data: [1, 2]\n\n', 'the upstream sent a malformed event'],
    ['a delta without its delta', sse([['content_block_delta', { type: 'content_block_delta', index: 0 }]]), 'the upstream sent a malformed event'],
    [
      'a text delta without text',
      sse([['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta' } }]]),
      'the upstream sent a malformed event',
    ],
    ['a message start without an id', sse([['message_start', { type: 'message_start', message: {} }]]), 'the upstream sent a malformed event'],
  ])('fails on %s', (_name, text, message) => {
    const decoder = anthropicProvider.chat(TEST_CHANNEL, 'm').stream();
    const thrown = thrownBy(() => decodeAll(decoder, text));
    expect(thrown).toBeInstanceOf(StreamEventError);
    expect(thrown).toHaveProperty('message', message);
  });
});
