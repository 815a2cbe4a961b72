// AWS event-stream frames of Bedrock's streamed answers (docs/api.md 2.12): decoded as they arrive,
// InvokeModel's chunks as Anthropic's server-sent events, Converse's as named events, exception
// frames and broken frames as stream failures.
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { SseEvent, StreamFraming } from '../../src/core/provider';
import { StreamEventError } from '../../src/features/relay/event-stream';
import { UpstreamFailure } from '../../src/features/upstream/client';
import { MAX_EVENT_BYTES } from '../../src/features/upstream/sse';
import { converseStreamFraming, invokeStreamFraming } from '../../src/providers/bedrock/event-stream';
import { thrownBy } from '../thrown';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const string = (value: string) => ({ type: 'string' as const, value });

function frame(headers: MessageHeaders, payload: unknown): Buffer {
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
}

function eventFrame(eventType: string, payload: unknown): Buffer {
  return frame({ ':event-type': string(eventType), ':content-type': string('application/json'), ':message-type': string('event') }, payload);
}

/** One Anthropic event as InvokeModelWithResponseStream frames it. */
function chunkFrame(event: Record<string, unknown>): Buffer {
  return eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefgh' });
}

function exceptionFrame(type: string, message: string): Buffer {
  return frame({ ':exception-type': string(type), ':content-type': string('application/json'), ':message-type': string('exception') }, { message });
}

/** Feeds `bytes` in pieces of `size`, collecting each push's events. */
function feed(framing: StreamFraming, bytes: Buffer, size: number): SseEvent[][] {
  const pushes: SseEvent[][] = [];
  for (let at = 0; at < bytes.length; at += size) pushes.push(framing.push(bytes.subarray(at, at + size)));
  return pushes;
}

const DELTA = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } };
const STOP = { type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3, outputTokenCount: 5, invocationLatency: 100, firstByteLatency: 50 } };

describe('invokeStreamFraming', () => {
  it("turns a chunk frame into Anthropic's server-sent event, byte for byte", () => {
    const [event] = invokeStreamFraming().push(chunkFrame(DELTA));
    const data = JSON.stringify(DELTA);
    expect(event).toEqual({ event: 'content_block_delta', data, raw: `event: content_block_delta\ndata: ${data}\n\n` });
  });

  it("strips Bedrock's invocation metrics from message_stop", () => {
    const [event] = invokeStreamFraming().push(chunkFrame(STOP));
    expect(event).toEqual({ event: 'message_stop', data: '{"type":"message_stop"}', raw: 'event: message_stop\ndata: {"type":"message_stop"}\n\n' });
  });

  it('reads an event whose JSON does not start with its type, and keeps every event on one data line', () => {
    const pretty = Buffer.from(JSON.stringify({ index: 0, type: 'content_block_stop' }, null, 2)).toString('base64');
    const [event] = invokeStreamFraming().push(eventFrame('chunk', { bytes: pretty }));
    expect(event).toEqual({ event: 'content_block_stop', data: '{"index":0,"type":"content_block_stop"}', raw: 'event: content_block_stop\ndata: {"index":0,"type":"content_block_stop"}\n\n' });
  });

  it('decodes two frames that arrive in one chunk at once', () => {
    const framing = invokeStreamFraming();
    const events = framing.push(Buffer.concat([chunkFrame(DELTA), chunkFrame(STOP)]));
    expect(events.map((event) => event.event)).toEqual(['content_block_delta', 'message_stop']);
    expect(framing.end()).toEqual([]);
  });

  it.each([1, 3, 5, 17])('holds a frame split across chunks of %d bytes until it is whole, and gives it then', (size) => {
    const framing = invokeStreamFraming();
    const first = chunkFrame(DELTA);
    const pushes = feed(framing, Buffer.concat([first, chunkFrame(STOP)]), size);
    const lengths = pushes.map((events) => events.length);
    // The first frame comes with the push that completes it, not later.
    const completing = Math.ceil(first.length / size) - 1;
    expect(lengths[completing]).toBe(1);
    expect(lengths.reduce((sum, count) => sum + count, 0)).toBe(2);
    expect(pushes.flat().map((event) => event.event)).toEqual(['content_block_delta', 'message_stop']);
    expect(framing.end()).toEqual([]);
  });

  it('gives the rest of a chunk once the frame it ends is whole, and keeps the start of the next', () => {
    const framing = invokeStreamFraming();
    const bytes = Buffer.concat([chunkFrame(DELTA), chunkFrame(DELTA), chunkFrame(STOP)]);
    const cut = chunkFrame(DELTA).length + 10;
    expect(framing.push(bytes.subarray(0, cut)).map((event) => event.event)).toEqual(['content_block_delta']);
    expect(framing.push(bytes.subarray(cut)).map((event) => event.event)).toEqual(['content_block_delta', 'message_stop']);
  });

  it('skips frames of other event types', () => {
    expect(invokeStreamFraming().push(eventFrame('initial-response', {}))).toEqual([]);
  });

  it.each([
    ['throttlingException', 429],
    ['validationException', 400],
    ['serviceUnavailableException', 503],
    ['internalServerException', 500],
    ['modelStreamErrorException', 500],
    ['modelTimeoutException', 504],
  ])('fails the stream on a %s frame with its message and the status %d', (type, status) => {
    const failure = thrownBy(() => invokeStreamFraming().push(exceptionFrame(type, 'Too many requests, please wait.')));
    expect(failure).toBeInstanceOf(StreamEventError);
    expect(failure).toMatchObject({ message: 'upstream error: Too many requests, please wait.', status });
  });

  it('hands on the events before an exception frame of the same chunk, then fails', () => {
    const framing = invokeStreamFraming();
    const events = framing.push(Buffer.concat([chunkFrame(DELTA), exceptionFrame('modelStreamErrorException', 'interrupted')]));
    expect(events.map((event) => event.event)).toEqual(['content_block_delta']);
    expect(thrownBy(() => framing.end())).toMatchObject({ message: 'upstream error: interrupted', status: 500 });
  });

  it('fails on a frame whose message CRC is wrong', () => {
    const broken = chunkFrame(DELTA);
    broken.writeUInt32BE((broken.readUInt32BE(broken.length - 4) + 1) >>> 0, broken.length - 4);
    const failure = thrownBy(() => invokeStreamFraming().push(broken));
    expect(failure).toBeInstanceOf(StreamEventError);
    expect(failure).toMatchObject({ message: 'the upstream sent a malformed event' });
  });

  it('fails on a prelude too short to be a frame, and on a body that ends inside a frame', () => {
    const short = Buffer.alloc(8);
    short.writeUInt32BE(8);
    expect(thrownBy(() => invokeStreamFraming().push(short))).toBeInstanceOf(StreamEventError);
    const framing = invokeStreamFraming();
    expect(framing.push(chunkFrame(DELTA).subarray(0, 20))).toEqual([]);
    expect(thrownBy(() => framing.end())).toBeInstanceOf(StreamEventError);
  });

  it('refuses a frame announced larger than the largest event, before holding any of it', () => {
    const prelude = Buffer.alloc(12);
    prelude.writeUInt32BE(MAX_EVENT_BYTES + 1);
    const failure = thrownBy(() => invokeStreamFraming().push(prelude));
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect((failure as Error).message).toMatch(/exceeded/);
  });
});

describe('converseStreamFraming', () => {
  it('names each event by its type and keeps its payload as JSON text', () => {
    const events = converseStreamFraming().push(Buffer.concat([
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
    ]));
    expect(events).toEqual([
      { event: 'messageStart', data: '{"role":"assistant"}', raw: '' },
      { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Hi"}}', raw: '' },
    ]);
  });

  it('fails on an exception frame as on InvokeModel streams', () => {
    expect(thrownBy(() => converseStreamFraming().push(exceptionFrame('throttlingException', 'slow down')))).toMatchObject({ status: 429 });
  });
});
