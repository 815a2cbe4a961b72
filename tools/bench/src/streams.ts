import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { RequestSpec } from './load';
import { Samples, type Summary, summarize } from './stats';

export interface StreamResult {
  streams: number;
  /** Streams that ended with `data: [DONE]`, every expected chunk received and no error event. */
  ok: number;
  errors: number;
  errorKinds: string[];
  /** Request start to the first body byte, ms. */
  firstByte: Summary;
  /** Between consecutive text chunks of one stream, ms. */
  gap: Summary;
  /** Request start to `[DONE]`, ms. */
  total: Summary;
  /**
   * Text chunks that reached the client in the same read as the previous one: a relay that holds a
   * chunk back until the next arrives shows up here (load alone merges a few).
   */
  merged: number;
  chunks: number;
  /** CPU microseconds per stream by process, when measured. */
  cpuPerRequest?: string;
  /** Share of the machine's CPU time given to other guests of the host during the case (%). */
  stealPercent?: number;
}

const STREAM_TIMEOUT_MS = 60_000;

interface OneStream {
  firstByteMs: number;
  totalMs: number;
  chunkTimes: number[];
  merged: number;
}

/** Reads one SSE answer, timing each text chunk as the client sees it. */
function readStream(pool: Pool, spec: RequestSpec, expectedChunks: number): Promise<OneStream> {
  const sent = performance.now();
  return new Promise<OneStream>((resolve, reject) => {
    pool.request({ path: spec.path, method: 'POST', headers: spec.headers, body: spec.body }).then((response) => {
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
        if (Number.isNaN(result.firstByteMs)) result.firstByteMs = now - sent;
        buffer += text;
        let textChunksInRead = 0;
        let separator = buffer.indexOf('\n\n');
        while (separator !== -1) {
          const event = buffer.slice(0, separator);
          buffer = buffer.slice(separator + 2);
          separator = buffer.indexOf('\n\n');
          const data = event.startsWith('data: ') ? event.slice(6) : '';
          if (data === '[DONE]') {
            done = true;
            result.totalMs = now - sent;
            continue;
          }
          let chunk: { error?: unknown; choices?: { text?: string }[] };
          try {
            chunk = JSON.parse(data) as typeof chunk;
          } catch {
            response.body.destroy(new Error('malformed event'));
            return;
          }
          if (chunk.error) {
            response.body.destroy(new Error('error event'));
            return;
          }
          if (chunk.choices?.some((choice) => typeof choice.text === 'string' && choice.text.length > 0)) {
            textChunksInRead += 1;
            result.chunkTimes.push(now);
          }
        }
        if (textChunksInRead > 1) result.merged += textChunksInRead - 1;
      });
      response.body.on('error', reject);
      response.body.on('end', () => {
        if (!done) reject(new Error('no [DONE]'));
        else if (result.chunkTimes.length !== expectedChunks) reject(new Error(`${result.chunkTimes.length} of ${expectedChunks} chunks`));
        else resolve(result);
      });
    }, reject);
  });
}

function streamPool(spec: RequestSpec, connections: number): Pool {
  return new Pool(spec.origin, {
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
  private started = 0;
  private ok = 0;
  private merged = 0;
  private chunks = 0;

  async track(stream: Promise<OneStream>): Promise<void> {
    this.started += 1;
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
      streams: this.started,
      ok: this.ok,
      errors: this.started - this.ok,
      errorKinds: [...this.errorCounts].map(([kind, count]) => `${kind} x${count}`),
      firstByte: summarize(this.firstByte.toArray()),
      gap: summarize(this.gaps.toArray()),
      total: summarize(this.totals.toArray()),
      merged: this.merged,
      chunks: this.chunks,
    };
  }
}

/**
 * `concurrency` streams open at all times: each slot starts its next stream when the previous one
 * ends, and the slots start spread over `spreadMs` (one stream's length), so arrivals are even. Each
 * stream's first chunk is timed from its request's start; the gaps between its chunks show whether
 * the gateway passes each event on at once (the upstream spaces them by a fixed delay).
 */
export async function runStreams(
  spec: RequestSpec,
  concurrency: number,
  streamsPerSlot: number,
  expectedChunks: number,
  spreadMs: number,
): Promise<StreamResult> {
  const pool = streamPool(spec, concurrency);
  const tally = new StreamTally();
  const slot = async (index: number) => {
    await new Promise((resolve) => setTimeout(resolve, (index * spreadMs) / concurrency));
    for (let i = 0; i < streamsPerSlot; i++) await tally.track(readStream(pool, spec, expectedChunks));
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => slot(index)));
  await pool.close();
  return tally.result();
}

/**
 * `count` streams requested at the same instant on open connections: what a burst of arrivals
 * waits. `opening` is the round that opened the connections (real calls too).
 */
export async function runStreamBurst(
  spec: RequestSpec,
  count: number,
  expectedChunks: number,
): Promise<{ opening: StreamResult; burst: StreamResult }> {
  const pool = streamPool(spec, count);
  // Opens the connections first, so the burst measures the gateway, not TCP handshakes.
  const opening = new StreamTally();
  await Promise.all(Array.from({ length: count }, () => opening.track(readStream(pool, spec, expectedChunks))));
  const burst = new StreamTally();
  await Promise.all(Array.from({ length: count }, () => burst.track(readStream(pool, spec, expectedChunks))));
  await pool.close();
  return { opening: opening.result(), burst: burst.result() };
}
