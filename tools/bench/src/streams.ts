import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { bodyOf } from './load';
import type { CpuCost } from './process-stats';
import type { AnswerDialect, Call } from './requests';
import { Samples, type Summary, summarize } from './stats';

export interface StreamResult {
  streams: number;
  /**
   * Streams that ended normally (`data: [DONE]`, Anthropic's `message_stop`, ...), every expected chunk
   * received and no error event.
   */
  ok: number;
  errors: number;
  errorKinds: string[];
  /** Request start to the first body byte, ms. */
  firstByte: Summary;
  /** Between consecutive text chunks of one stream, ms. */
  gap: Summary;
  /** Request start to the end event, ms. */
  total: Summary;
  /**
   * Text chunks that reached the client in the same read as the previous one: a relay that holds a
   * chunk back until the next arrives shows up here (load alone merges a few).
   */
  merged: number;
  chunks: number;
  /** Complete streams per second of the run. */
  requestsPerSecond: number;
  /** CPU microseconds per stream by process, when measured. */
  cpuPerRequest?: CpuCost[];
  /** Share of the machine's CPU time given to other guests of the host during the case (%). */
  stealPercent?: number;
}

const STREAM_TIMEOUT_MS = 60_000;

/**
 * What one SSE event (framing included, without the blank line after it) is to the reader: `last
 * text` is a text chunk that also ends the stream (Gemini's last chunk carries its finishReason).
 */
export type StreamEventKind = 'text' | 'last text' | 'end' | 'other';

function eventData(event: string): string {
  for (const line of event.split('\n')) if (line.startsWith('data: ')) return line.slice(6);
  return '';
}

function parsed(data: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new Error('malformed event');
  }
  if (value === null || typeof value !== 'object') throw new Error('malformed event');
  return value as Record<string, unknown>;
}

const nonEmpty = (value: unknown): boolean => typeof value === 'string' && value.length > 0;

/** Each dialect's reading of an event's data; throws on an error event. */
const CLASSIFIERS: Record<AnswerDialect, (data: string) => StreamEventKind> = {
  openai(data) {
    if (data === '[DONE]') return 'end';
    const chunk = parsed(data) as { error?: unknown; choices?: { text?: unknown; delta?: { content?: unknown } }[] };
    if (chunk.error) throw new Error('error event');
    const texts = chunk.choices?.some((choice) => nonEmpty(choice.text) || nonEmpty(choice.delta?.content));
    return texts ? 'text' : 'other';
  },
  anthropic(data) {
    const payload = parsed(data) as { type?: unknown; delta?: { type?: unknown; text?: unknown } };
    if (payload.type === 'error') throw new Error('error event');
    if (payload.type === 'message_stop') return 'end';
    return payload.type === 'content_block_delta' && payload.delta?.type === 'text_delta' && nonEmpty(payload.delta.text) ? 'text' : 'other';
  },
  responses(data) {
    const payload = parsed(data) as { type?: unknown; delta?: unknown };
    if (payload.type === 'error' || payload.type === 'response.failed') throw new Error('error event');
    // A response capped by max_output_tokens ends incomplete: still the end of a whole answer.
    if (payload.type === 'response.completed' || payload.type === 'response.incomplete') return 'end';
    return payload.type === 'response.output_text.delta' && nonEmpty(payload.delta) ? 'text' : 'other';
  },
  gemini(data) {
    const chunk = parsed(data) as { error?: unknown; candidates?: { content?: { parts?: { text?: unknown }[] }; finishReason?: unknown }[] };
    if (chunk.error) throw new Error('error event');
    const texts = chunk.candidates?.some((candidate) => candidate.content?.parts?.some((part) => nonEmpty(part.text)));
    // Gemini has no end event: the chunk with a finishReason is the last.
    if (chunk.candidates?.some((candidate) => candidate.finishReason !== undefined)) return texts ? 'last text' : 'end';
    return texts ? 'text' : 'other';
  },
};

/**
 * A text chunk (completions `text`, chat `delta.content`, Anthropic `text_delta`, responses
 * `output_text.delta`, Gemini text parts), the stream's end (`[DONE]`, `message_stop`,
 * `response.completed`, a finishReason), or anything else; throws on an error event or one that is not JSON.
 */
export function classifyEvent(dialect: AnswerDialect, event: string): StreamEventKind {
  return CLASSIFIERS[dialect](eventData(event));
}

interface OneStream {
  firstByteMs: number;
  totalMs: number;
  chunkTimes: number[];
  merged: number;
}

/** Reads one SSE answer, timing each text chunk as the client sees it; `opened` is told its first byte. */
function readStream(pool: Pool, call: Call, expectedChunks: number, opened?: () => void): Promise<OneStream> {
  const sent = performance.now();
  return new Promise<OneStream>((resolve, reject) => {
    pool.request({ path: call.path, method: 'POST', headers: call.headers, body: bodyOf(call) }).then((response) => {
      if (response.statusCode !== 200) {
        response.body.resume();
        reject(new Error(`HTTP ${response.statusCode}`));
        return;
      }
      const result: OneStream = { firstByteMs: Number.NaN, totalMs: Number.NaN, chunkTimes: [], merged: 0 };
      let buffer = '';
      let done = false;
      response.body.setEncoding('utf8');
      response.body.on('data', (text: string) => {
        const now = performance.now();
        if (Number.isNaN(result.firstByteMs)) {
          result.firstByteMs = now - sent;
          opened?.();
        }
        buffer += text;
        // Gemini separates events with CRLF pairs; a CR read without its LF waits for the next read.
        if (buffer.includes('\r\n')) buffer = buffer.replace(/\r\n/g, '\n');
        let textChunksInRead = 0;
        let separator = buffer.indexOf('\n\n');
        while (separator !== -1) {
          const event = buffer.slice(0, separator);
          buffer = buffer.slice(separator + 2);
          separator = buffer.indexOf('\n\n');
          let kind: StreamEventKind;
          try {
            kind = classifyEvent(call.dialect, event);
          } catch (err) {
            response.body.destroy(err as Error);
            return;
          }
          if (kind === 'end' || kind === 'last text') {
            done = true;
            result.totalMs = now - sent;
          }
          if (kind === 'text' || kind === 'last text') {
            textChunksInRead += 1;
            result.chunkTimes.push(now);
          }
        }
        if (textChunksInRead > 1) result.merged += textChunksInRead - 1;
      });
      response.body.on('error', reject);
      response.body.on('end', () => {
        if (!done) reject(new Error('no end event'));
        else if (result.chunkTimes.length !== expectedChunks) reject(new Error(`${result.chunkTimes.length} of ${expectedChunks} chunks`));
        else resolve(result);
      });
    }, reject);
  });
}

function streamPool(call: Call, connections: number): Pool {
  return new Pool(call.origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: STREAM_TIMEOUT_MS,
    bodyTimeout: STREAM_TIMEOUT_MS,
  });
}

/** Collects the outcome of many streams. */
class StreamTally {
  private readonly firstByte = new Samples();
  private readonly gaps = new Samples();
  private readonly totals = new Samples();
  private readonly errorCounts = new Map<string, number>();
  private streams = 0;
  private ok = 0;
  private merged = 0;
  private chunks = 0;
  /** Time spent running streams, for the rate (a tally may collect several separate runs). */
  activeMs = 0;

  async track(stream: Promise<OneStream>): Promise<void> {
    this.streams += 1;
    try {
      const result = await stream;
      this.ok += 1;
      this.firstByte.push(result.firstByteMs);
      this.totals.push(result.totalMs);
      this.merged += result.merged;
      this.chunks += result.chunkTimes.length;
      let previous: number | undefined;
      for (const time of result.chunkTimes) {
        if (previous !== undefined) this.gaps.push(time - previous);
        previous = time;
      }
    } catch (err) {
      const kind = (err as { code?: string }).code ?? (err as Error).message;
      this.errorCounts.set(kind, (this.errorCounts.get(kind) ?? 0) + 1);
    }
  }

  result(): StreamResult {
    return {
      streams: this.streams,
      ok: this.ok,
      errors: this.streams - this.ok,
      errorKinds: [...this.errorCounts].map(([kind, count]) => `${kind} x${count}`),
      firstByte: summarize(this.firstByte.toArray()),
      gap: summarize(this.gaps.toArray()),
      total: summarize(this.totals.toArray()),
      merged: this.merged,
      chunks: this.chunks,
      requestsPerSecond: (this.ok / this.activeMs) * 1000,
    };
  }
}

/** How many streams are open at once, how their starts are spread, and what each must deliver. */
export interface StreamShape {
  concurrency: number;
  /** The slots start spread over this many ms (one stream's length), so arrivals are even. */
  spreadMs: number;
  expectedChunks: number;
}

/**
 * `concurrency` streams open at all times: each slot starts its next stream when the previous one
 * ends. Each stream's first chunk is timed from its request's start; the gaps between its chunks
 * show whether the gateway passes each event on at once (the upstream spaces them by a fixed delay).
 * A load can run several times on its open connections (the kinds of a case taking turns), and
 * `close` gives the outcome of all of them.
 */
export class StreamLoad {
  private readonly pool: Pool;
  private readonly tally = new StreamTally();

  constructor(
    private readonly call: Call,
    private readonly shape: StreamShape,
  ) {
    this.pool = streamPool(call, shape.concurrency);
  }

  /** Runs until no slot wants `another` stream (given how many it ran in this run). */
  async run(another: (runInSlot: number) => boolean): Promise<void> {
    const { concurrency, spreadMs, expectedChunks } = this.shape;
    const started = performance.now();
    const slot = async (index: number) => {
      await new Promise((resolve) => setTimeout(resolve, (index * spreadMs) / concurrency));
      for (let run = 0; another(run); run++) await this.tally.track(readStream(this.pool, this.call, expectedChunks));
    };
    await Promise.all(Array.from({ length: concurrency }, (_, index) => slot(index)));
    this.tally.activeMs += performance.now() - started;
  }

  async close(): Promise<StreamResult> {
    await this.pool.close();
    return this.tally.result();
  }
}

/** One run of a stream load. */
export async function runStreams(call: Call, shape: StreamShape, another: (runInSlot: number) => boolean): Promise<StreamResult> {
  const load = new StreamLoad(call, shape);
  await load.run(another);
  return load.close();
}

/**
 * `count` streams requested at the same instant on open connections: what a burst of arrivals
 * waits. `opening` is the round that opened the connections (real calls too).
 */
export async function runStreamBurst(
  call: Call,
  count: number,
  expectedChunks: number,
): Promise<{ opening: StreamResult; burst: StreamResult }> {
  const pool = streamPool(call, count);
  // Opens the connections first, so the burst measures the gateway, not TCP handshakes.
  const round = async (tally: StreamTally) => {
    const started = performance.now();
    await Promise.all(Array.from({ length: count }, () => tally.track(readStream(pool, call, expectedChunks))));
    tally.activeMs += performance.now() - started;
  };
  const opening = new StreamTally();
  await round(opening);
  const burst = new StreamTally();
  await round(burst);
  await pool.close();
  return { opening: opening.result(), burst: burst.result() };
}

/**
 * `count` long streams held open together, their requests spread over `rampMs` (a listen backlog
 * takes a few hundred connections at once, not thousands). `allOpen` runs once every stream has its
 * first byte or has failed: the moment the gateway holds the most.
 */
export async function runOpenStreams(call: Call, count: number, expectedChunks: number, rampMs: number, allOpen: () => void): Promise<StreamResult> {
  const pool = streamPool(call, count);
  const tally = new StreamTally();
  let settled = 0;
  const settle = () => {
    settled += 1;
    if (settled === count) allOpen();
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      await new Promise((resolve) => setTimeout(resolve, (index * rampMs) / count));
      let opened = false;
      const stream = readStream(pool, call, expectedChunks, () => {
        opened = true;
        settle();
      });
      await tally.track(stream);
      if (!opened) settle();
    }),
  );
  tally.activeMs += performance.now() - started;
  await pool.close();
  return tally.result();
}
