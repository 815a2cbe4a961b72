// docs/api.md 2.9: an Anthropic stream passed through to a Messages client, event by event: the
// bytes as they came, message_start's model the one asked for, usage from message_start and
// message_delta, the delivered text counted only when Anthropic's count did not come.
import { StreamEventError } from '../../src/features/relay/event-stream';
import { countDeliveredTokens } from '../../src/features/relay/tokens';
import { SseParser } from '../../src/features/upstream/sse';
import { MessagesPassThroughStream } from '../../src/dialects/anthropic/pass-through';

const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

const START = sse('message_start', {
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-opus-4-5-20251101',
    content: [],
    usage: { input_tokens: 10, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 1 },
  },
});
const THINKING = [
  sse('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think.' } }),
  sse('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkYIBxgCKkA+/=' } }),
  sse('content_block_stop', { index: 0 }),
];
const TEXT = [
  sse('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
  sse('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Hello there, ' } }),
  sse('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'friend.' } }),
  sse('content_block_stop', { index: 1 }),
];
const DELTA = sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 42 } });
const STOP = sse('message_stop', {});

const PROMPT_COUNT = 7;

/** Feeds the events to a pass-through stream as relayEventStream does; what the client got. */
function relay(stream: MessagesPassThroughStream, events: string[]): string {
  const parser = new SseParser();
  let written = '';
  for (const event of parser.push(Buffer.from(events.join('')))) {
    if (stream.done) break;
    written += stream.onEvent(event) ?? '';
  }
  return written;
}

const passThrough = (clientModel?: string) => new MessagesPassThroughStream(clientModel, () => PROMPT_COUNT);

describe('MessagesPassThroughStream', () => {
  it('writes every event as it came, stops at message_stop, and bills Anthropic counts', () => {
    const stream = passThrough();
    const events = [START, sse('ping', {}), ...THINKING, ...TEXT, DELTA, STOP];
    expect(relay(stream, [...events, 'event: ping\ndata: {"type":"ping"}\n\n'])).toBe(events.join(''));
    expect(stream.done).toBe(true);
    expect(stream.sawUsage).toBe(true);
    expect(stream.tail()).toBe('');
    expect(stream.billedUsage(false)).toEqual({ promptTokens: 130, completionTokens: 42, cachedTokens: 100, cacheWriteTokens: 20, reasoningTokens: 0 });
  });

  it("rewrites only message_start's model, for a channel that renamed it", () => {
    const written = relay(passThrough('claude-opus-4-5'), [START, ...TEXT]);
    const [start, ...rest] = written.split('\n\n');
    expect(JSON.parse(start?.replace(/^event: message_start\ndata: /, '') ?? '')).toMatchObject({ message: { model: 'claude-opus-4-5', id: 'msg_1' } });
    expect(rest.join('\n\n')).toBe(TEXT.join(''));
  });

  it('counts the delivered text (thinking included) for a stream cut before message_delta', () => {
    const stream = passThrough();
    relay(stream, [START, ...THINKING, ...TEXT]);
    expect(stream.billedUsage(true)).toMatchObject({ promptTokens: 130, completionTokens: countDeliveredTokens(['Let me think.', 'Hello there, ', 'friend.']) });
  });

  it("takes message_start's prompt count for no output count: a stream cut right after it delivered nothing", () => {
    const stream = passThrough();
    relay(stream, [START, sse('ping', {})]);
    expect(stream.sawUsage).toBe(false);
    expect(stream.billedUsage(true)).toMatchObject({ promptTokens: 130, completionTokens: 0 });
  });

  it('counts the prompt and the text when no usage came at all', () => {
    const noUsage = START.replace(/,"usage":\{[^}]*\}/, '');
    const stream = passThrough();
    relay(stream, [noUsage, ...TEXT, sse('message_delta', { delta: { stop_reason: 'end_turn' } }), STOP]);
    expect(stream.sawUsage).toBe(false);
    expect(stream.billedUsage(false)).toMatchObject({ promptTokens: PROMPT_COUNT, completionTokens: countDeliveredTokens(['Hello there, friend.']) });
  });

  it("reads events without an event: line by their data's type", () => {
    const stream = passThrough();
    const bare = [START, DELTA, STOP].map((event) => event.replace(/^event: .*\n/, ''));
    relay(stream, bare);
    expect(stream.done).toBe(true);
    expect(stream.billedUsage(false).completionTokens).toBe(42);
  });

  it('throws an in-stream error event as a StreamEventError in the upstream words', () => {
    const stream = passThrough();
    const error = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    expect(() => relay(stream, [START, error])).toThrow(new StreamEventError('upstream error: Overloaded'));
  });

  it("ends a stream that stopped before message_stop with Anthropic's error event", () => {
    const stream = passThrough();
    relay(stream, [START, ...TEXT]);
    expect(stream.tail()).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*message_stop"\}\}\n\n$/);
  });
});
