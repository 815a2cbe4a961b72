import { StringDecoder } from 'node:string_decoder';
import type { SseEvent, StreamFraming } from '../../core/provider';
import { UpstreamFailure } from './client';

/** Largest event the relay holds while waiting for its end (docs/api.md 3.7). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * A blank line: two line endings, each CRLF, LF or CR. A CR followed by LF is one ending, so the
 * first may only be a lone CR when no LF follows it.
 */
const EVENT_END = /(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r)/g;
const LINE_END = /\r\n|\r|\n/;
const CR = 13;
const LF = 10;

const isLineEnd = (code: number) => code === LF || code === CR;

/**
 * Splits a byte stream into server-sent events (line endings CRLF, LF or CR, as the SSE spec
 * allows). Multi-byte characters and events split across chunks are reassembled. Each chunk's text
 * is searched once: an event in progress is kept as its received pieces, joined once when it ends,
 * so an event in many chunks costs time linear in its size. An event growing past MAX_EVENT_BYTES
 * is an UpstreamFailure.
 */
export class SseParser implements StreamFraming {
  private readonly decoder = new StringDecoder('utf8');
  /** The text of the event in progress, as received. */
  private pending: string[] = [];
  private pendingBytes = 0;
  /** The line endings `pending` ends with (at most two): the blank line may be split across chunks. */
  private carry = '';
  /** The last event ended with a CR: an LF right after it is part of that line ending. */
  private skipLf = false;

  push(chunk: Buffer): SseEvent[] {
    const text = this.afterSkippedLf(this.decoder.write(chunk));
    // The line endings left at the end of the previous chunk are searched again with this one.
    const source = this.carry === '' ? text : this.carry + text;
    const events: SseEvent[] = [];
    const withCr = source.includes('\r');
    let from = this.carry.length;
    for (let end = eventEnd(source, 0, withCr); end !== -1; end = eventEnd(source, end, withCr)) {
      const piece = source.slice(from, end);
      if (this.pending.length === 0) {
        events.push(parseEvent(piece, withCr));
      } else {
        const raw = this.pending.join('') + piece;
        events.push(parseEvent(raw, raw.includes('\r')));
        this.pending = [];
      }
      from = end;
    }
    if (from === source.length) {
      // Nothing left over (or nothing new: a chunk holding only part of a character).
      if (events.length > 0) {
        this.pendingBytes = 0;
        this.carry = '';
        this.skipLf = source.charCodeAt(source.length - 1) === CR;
      }
      return events;
    }
    const rest = from === 0 ? source : source.slice(from);
    this.pending.push(rest);
    this.pendingBytes = events.length === 0 ? this.pendingBytes + chunk.length : Buffer.byteLength(rest);
    if (this.pendingBytes > MAX_EVENT_BYTES) throw oversizedEvent();
    this.carry = trailingLineEnds(source, events.length === 0 ? 0 : from);
    return events;
  }

  /** What is left when the stream ends: a last event without its blank line, if any. */
  end(): SseEvent[] {
    const rest = this.pending.join('') + this.afterSkippedLf(this.decoder.end());
    this.pending = [];
    this.pendingBytes = 0;
    this.carry = '';
    return rest.trim() === '' ? [] : [parseEvent(rest, rest.includes('\r'))];
  }

  private afterSkippedLf(text: string): string {
    if (!this.skipLf || text === '') return text;
    this.skipLf = false;
    return text.charCodeAt(0) === LF ? text.slice(1) : text;
  }
}

export function oversizedEvent(): UpstreamFailure {
  return new UpstreamFailure('other', `an upstream event exceeded ${MAX_EVENT_BYTES / 1024 / 1024} MB`);
}

/** Where the first event ending at or after `from` ends (after its blank line), or -1. */
function eventEnd(source: string, from: number, withCr: boolean): number {
  // Most providers end lines with LF only: a plain search then.
  if (!withCr) {
    const at = source.indexOf('\n\n', from);
    return at === -1 ? -1 : at + 2;
  }
  EVENT_END.lastIndex = from;
  const match = EVENT_END.exec(source);
  return match === null ? -1 : match.index + match[0].length;
}

/** The line-ending characters `source` ends with after index `floor`, at most two. */
function trailingLineEnds(source: string, floor: number): string {
  let start = source.length;
  while (start > floor && source.length - start < 2 && isLineEnd(source.charCodeAt(start - 1))) start -= 1;
  return source.slice(start);
}

/** `withCr`: the event may hold CR line endings (without, a plain split is enough). */
function parseEvent(raw: string, withCr: boolean): SseEvent {
  let data: string | null = null;
  let event: string | null = null;
  // The blank line that ends it is not split into empty lines.
  let bodyEnd = raw.length;
  while (bodyEnd > 0 && isLineEnd(raw.charCodeAt(bodyEnd - 1))) bodyEnd -= 1;
  const body = raw.slice(0, bodyEnd);
  for (const line of withCr ? body.split(LINE_END) : body.split('\n')) {
    if (line.startsWith('data:')) {
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === null ? value : `${data}\n${value}`;
    } else if (line.startsWith('event:')) {
      event = line.charCodeAt(6) === 32 ? line.slice(7) : line.slice(6);
    }
  }
  return { raw, data, event };
}
