import { UpstreamFailure } from '../src/features/upstream/client';
import type { SseEvent } from '../src/core/provider';
import { MAX_EVENT_BYTES, SseParser } from '../src/features/upstream/sse';

/** Every event of `bytes` pushed in the given chunks, then the end of the stream. */
function parseChunks(chunks: Buffer[]): SseEvent[] {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return [...events, ...parser.end()];
}

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

  describe('line endings (CRLF, LF or CR, as the SSE format allows)', () => {
    const stream = Buffer.from(
      'data: a\n\n' + 'data: b\r\n\r\n' + 'data: c\r\r' + 'event: x\rdata: d\r\n\n' + 'data: e\n\r\n' + 'data: f1\r\ndata: f2\r\r\n' + ': ping\n\n' + 'data: g\n\n',
    );
    const expected = ['a', 'b', 'c', 'd', 'e', 'f1\nf2', null, 'g'];

    it('ends events at every kind of blank line', () => {
      const events = parseChunks([stream]);
      expect(events.map((e) => e.data)).toEqual(expected);
      expect(events[3]?.event).toBe('x');
    });

    it('finds the same events whichever byte a chunk ends at', () => {
      for (let at = 1; at < stream.length; at++) {
        expect(parseChunks([stream.subarray(0, at), stream.subarray(at)]).map((e) => e.data)).toEqual(expected);
      }
      const bytes = Array.from({ length: stream.length }, (_, i) => stream.subarray(i, i + 1));
      expect(parseChunks(bytes).map((e) => e.data)).toEqual(expected);
    });
  });

  it('reads an 8 MB event sent in 1 KB chunks in linear time', () => {
    const event = Buffer.from(`data: {"text":"${'x'.repeat(8 * 1024 * 1024)}"}\n\n`);
    const parser = new SseParser();
    const startedAt = performance.now();
    const events: SseEvent[] = [];
    for (let at = 0; at < event.length; at += 1024) events.push(...parser.push(event.subarray(at, at + 1024)));
    // Searching the whole buffer again at every chunk took more than 20 s here.
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(events).toHaveLength(1);
    expect(events[0]?.data?.length).toBe(8 * 1024 * 1024 + 11);
  });

  it('fails an event that grows past 16 MB without waiting for its end', () => {
    const parser = new SseParser();
    const piece = Buffer.alloc(64 * 1024, 'x');
    parser.push(Buffer.from('data: {"text":"'));
    let thrown: unknown;
    try {
      for (let sent = 0; sent <= MAX_EVENT_BYTES; sent += piece.length) parser.push(piece);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect(MAX_EVENT_BYTES).toBe(16 * 1024 * 1024);
  });
});
