import { SseParser } from '../src/features/upstream/sse';

describe('SseParser', () => {
  it('reassembles events and multi-byte characters split across chunks', () => {
    const parser = new SseParser();
    const bytes = Buffer.from('data: {"text":"caf\u00e9 \u2615"}\n\ndata: second\r\n\r\n: keep-alive\n\ndata: a\ndata: b\n\n');
    const events = [];
    for (let i = 0; i < bytes.length; i += 3) events.push(...parser.push(bytes.subarray(i, i + 3)));
    events.push(...parser.end());
    expect(events.map((e) => e.data)).toEqual(['{"text":"caf\u00e9 \u2615"}', 'second', null, 'a\nb']);
    expect(events.map((e) => e.raw).join('')).toBe(bytes.toString('utf8'));
  });

  it('returns a last event that lacks its blank line when the stream ends', () => {
    const parser = new SseParser();
    expect(parser.push(Buffer.from('data: [DONE]'))).toEqual([]);
    expect(parser.end()).toEqual([{ raw: 'data: [DONE]', data: '[DONE]', event: null }]);
  });

  it('reads the event name Anthropic and the Responses API put on every event', () => {
    const parser = new SseParser();
    const events = parser.push(Buffer.from('event: message_start\ndata: {"type":"message_start"}\n\nevent:ping\ndata: {}\n\n'));
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping']);
  });
});
