import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** The event as received, separator included: what a pass-through writes. */
  raw: string;
  /** The `data:` lines joined with "\n", or null for an event without data (comments, keep-alives). */
  data: string | null;
  /** The `event:` line's value (Anthropic and Responses name every event), or null. */
  event: string | null;
}

const SEPARATOR = /\r?\n\r?\n/;

/**
 * Splits a byte stream into server-sent events. Multi-byte characters split across chunks and
 * events split across chunks are reassembled; "\n\n" and "\r\n\r\n" separators are both accepted.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  push(chunk: Buffer): SseEvent[] {
    this.buffer += this.decoder.write(chunk);
    const events: SseEvent[] = [];
    let match = SEPARATOR.exec(this.buffer);
    while (match) {
      const end = match.index + match[0].length;
      events.push(parseEvent(this.buffer.slice(0, end), this.buffer.slice(0, match.index)));
      this.buffer = this.buffer.slice(end);
      match = SEPARATOR.exec(this.buffer);
    }
    return events;
  }

  /** What is left when the stream ends: a last event without its blank line, if any. */
  end(): SseEvent[] {
    this.buffer += this.decoder.end();
    const rest = this.buffer;
    this.buffer = '';
    return rest.trim() === '' ? [] : [parseEvent(rest, rest.trimEnd())];
  }
}

function parseEvent(raw: string, body: string): SseEvent {
  let data: string | null = null;
  let event: string | null = null;
  for (const line of body.split(/\r?\n/)) {
    if (line.startsWith('data:')) {
      const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
      data = data === null ? value : `${data}\n${value}`;
    } else if (line.startsWith('event:')) {
      event = line.charCodeAt(6) === 32 ? line.slice(7) : line.slice(6);
    }
  }
  return { raw, data, event };
}
