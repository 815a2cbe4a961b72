import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { eventObjectOf, malformedEvent, reportedStreamError, StreamEventError } from '../../features/relay/event-stream';
import { MAX_EVENT_BYTES, oversizedEvent } from '../../features/upstream/sse';
import type { SseEvent, StreamFraming } from '../../core/provider';
import { awsErrorMessage, awsErrorStatus } from './errors';

/**
 * AWS event-stream frames (`application/vnd.amazon.eventstream`): a prelude (total length, headers
 * length, prelude CRC), typed headers, the payload and a CRC of the whole frame.
 */
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const LENGTH_BYTES = 4;
/** A frame without headers or payload: prelude and both CRCs. */
const MIN_FRAME_BYTES = 16;

/** What one complete frame stands for: an event, or undefined for a frame that says nothing to relay. */
type FrameReader = (message: Message) => SseEvent | undefined;

function stringHeader(message: Message, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

/**
 * The failure a frame reports (`:message-type` `exception`, with its type and `{message}`, or
 * `error`, with `:error-code` / `:error-message`), as the status its type stands for; undefined for an event.
 */
function reportedFailure(message: Message): StreamEventError | undefined {
  const kind = stringHeader(message, ':message-type');
  if (kind === 'exception') {
    const type = stringHeader(message, ':exception-type') ?? '';
    let payload: Record<string, unknown> | undefined;
    try {
      payload = eventObjectOf(toUtf8(message.body));
    } catch {
      payload = undefined;
    }
    return reportedStreamError(awsErrorMessage(payload) ?? type, awsErrorStatus(type));
  }
  if (kind === 'error') {
    const code = stringHeader(message, ':error-code') ?? '';
    return reportedStreamError(stringHeader(message, ':error-message') ?? code, awsErrorStatus(code));
  }
  return undefined;
}

/** A complete frame decoded and checked (both CRCs): a frame that does not check out is malformed. */
function decodeFrame(bytes: Buffer): Message {
  let message: Message;
  try {
    message = codec.decode(bytes);
  } catch {
    throw malformedEvent();
  }
  const failure = reportedFailure(message);
  if (failure) throw failure;
  return message;
}

/** The length a frame's prelude announces, checked before any of it is held. */
function frameLength(bytes: Buffer, offset: number): number {
  const length = bytes.readUInt32BE(offset);
  if (length < MIN_FRAME_BYTES) throw malformedEvent();
  if (length > MAX_EVENT_BYTES) throw oversizedEvent();
  return length;
}

/**
 * Splits an event-stream body into frames as its bytes arrive: every complete frame becomes its
 * event at once; only a frame still incomplete is held, as its received pieces, joined once its
 * length is known and once it is whole (linear in its size). A frame that reports a failure (or is
 * malformed) fails the stream after the events before it in the same chunk were handed on.
 */
class EventStreamFraming implements StreamFraming {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the held frame needs before it is looked at again: its length, or the bytes of its length. */
  private needed = 0;
  private failure: unknown;

  constructor(private readonly readFrame: FrameReader) {}

  push(chunk: Buffer): SseEvent[] {
    if (this.failure !== undefined) throw this.failure;
    let bytes = chunk;
    if (this.pendingBytes > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      if (this.pendingBytes < this.needed) return [];
      bytes = Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
    }
    const events: SseEvent[] = [];
    let offset = 0;
    try {
      while (bytes.length - offset >= LENGTH_BYTES) {
        const length = frameLength(bytes, offset);
        if (bytes.length - offset < length) break;
        const event = this.readFrame(decodeFrame(bytes.subarray(offset, offset + length)));
        if (event) events.push(event);
        offset += length;
      }
    } catch (err) {
      if (events.length === 0) throw err;
      this.failure = err;
      return events;
    }
    if (offset < bytes.length) {
      const rest = offset === 0 ? bytes : bytes.subarray(offset);
      this.pending.push(rest);
      this.pendingBytes = rest.length;
      this.needed = rest.length >= LENGTH_BYTES ? rest.readUInt32BE(0) : LENGTH_BYTES;
    }
    return events;
  }

  /** A failure left over, or a frame cut short by the end of the body: the stream was not whole. */
  end(): SseEvent[] {
    if (this.failure !== undefined) throw this.failure;
    if (this.pendingBytes > 0) throw malformedEvent();
    return [];
  }
}

/** The invocation metrics Bedrock adds to the last Anthropic event: not the client's. */
const INVOCATION_METRICS = 'amazon-bedrock-invocationMetrics';
/** The `type` Anthropic's compact JSON starts with, read without parsing the event. */
const LEADING_TYPE = /^\{"type":"([a-z_]+)"/;

/**
 * An InvokeModelWithResponseStream `chunk` frame (`{"bytes": <base64 of one Anthropic event>}`) as
 * the server-sent event Anthropic would have sent, so a Messages client gets Anthropic's SSE byte
 * for byte (docs/api.md 2.9, 2.12); only message_stop is rewritten, without Bedrock's metrics.
 */
function anthropicEventOf(message: Message): SseEvent | undefined {
  if (stringHeader(message, ':event-type') !== 'chunk') return undefined;
  const { bytes } = eventObjectOf(toUtf8(message.body));
  if (typeof bytes !== 'string') throw malformedEvent();
  let data = Buffer.from(bytes, 'base64').toString('utf8');
  let type = LEADING_TYPE.exec(data)?.[1];
  if (type === undefined || type === 'message_stop' || data.includes('\n')) {
    const event = eventObjectOf(data);
    if (typeof event.type !== 'string') throw malformedEvent();
    type = event.type;
    delete event[INVOCATION_METRICS];
    data = JSON.stringify(event);
  }
  return { event: type, data, raw: `event: ${type}\ndata: ${data}\n\n` };
}

/** A ConverseStream frame: its `:event-type` and its JSON payload (it is never relayed as is). */
function converseEventOf(message: Message): SseEvent | undefined {
  const type = stringHeader(message, ':event-type');
  return type === undefined ? undefined : { event: type, data: toUtf8(message.body), raw: '' };
}

/** The framing of InvokeModelWithResponseStream: Anthropic's events. */
export function invokeStreamFraming(): StreamFraming {
  return new EventStreamFraming(anthropicEventOf);
}

/** The framing of ConverseStream: Converse's events, named by their type. */
export function converseStreamFraming(): StreamFraming {
  return new EventStreamFraming(converseEventOf);
}
