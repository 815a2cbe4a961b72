import type { SseEvent } from '../../core/provider';
import { SseParser } from '../upstream/sse';
import { answerObjectOf, classifyUpstreamError, UpstreamFailure, type UpstreamResponse } from '../upstream/client';
import { ClientPace } from './client-pace';
import type { DeliveryContext } from './relay-call';

/** What a media answer tells about its billing, read as it passes through untouched. */
export interface AnswerReader {
  /** A whole JSON answer (images, transcriptions, moderations, rerank). */
  json?(answer: Record<string, unknown>): void;
  /** One event of an answer streamed as server-sent events (partial images, speech or transcript events). */
  event?(event: SseEvent): void;
}

export interface MediaAnswerResult {
  firstByteMs: number | null;
  /** The client left, or the upstream broke, after the first byte: the client got part of the answer. */
  cut: boolean;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const EVENT_STREAM_TYPE = /^text\/event-stream\b/i;

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Relays a 2xx media answer as the upstream sent it (docs/api.md 2.13): a whole answer at once, a
 * streamed one (audio bytes, server-sent events) chunk by chunk as it arrives, paused while the
 * client cannot take more, so memory stays flat whatever the answer's length. `reader` sees a whole
 * JSON answer, or each event of a streamed one, on the way. A whole JSON answer naming a model
 * (moderations, rerank) names `model`, the one the client asked for (docs/api.md 2.4). A failure
 * before the first byte is thrown (another channel may be tried); after it the client's connection
 * is ended, as a binary stream has no error event.
 */
export function relayMediaAnswer(
  upstream: UpstreamResponse,
  { res, signal, startedAt }: DeliveryContext,
  reader: AnswerReader,
  model: string,
): Promise<MediaAnswerResult> {
  const contentType = headerText(upstream.headers['content-type']) ?? 'application/octet-stream';
  const body = upstream.body;
  if (Buffer.isBuffer(body)) {
    const answer = JSON_TYPE.test(contentType) ? answerObjectOf(body) : undefined;
    if (answer) reader.json?.(answer);
    // The channel's name for the model (model_mapping, a dated version) is not the client's.
    const sent = typeof answer?.model === 'string' && answer.model !== model ? Buffer.from(JSON.stringify({ ...answer, model })) : body;
    res.writeHead(200, { 'content-type': contentType, 'content-length': sent.length });
    res.end(sent);
    return Promise.resolve({ firstByteMs: Date.now() - startedAt, cut: false });
  }
  const events = EVENT_STREAM_TYPE.test(contentType) && reader.event ? new SseParser() : undefined;
  const result: MediaAnswerResult = { firstByteMs: null, cut: false };
  return new Promise((resolve, reject) => {
    let finished = false;
    const pace = new ClientPace(body, res, () => finished || signal.aborted);
    const read = (parsed: SseEvent[]) => {
      for (const event of parsed) reader.event!(event);
    };
    const fail = (err: unknown) => {
      if (finished) return;
      finished = true;
      body.destroy();
      signal.removeListener('abort', onAbort);
      if (result.firstByteMs === null && !signal.aborted) {
        reject(classifyUpstreamError(err, signal));
        return;
      }
      result.cut = result.firstByteMs !== null;
      if (!signal.aborted) res.destroy();
      resolve(result);
    };
    const onAbort = () => fail(new UpstreamFailure('aborted', 'client closed the request'));
    body.on('data', (chunk: Buffer) => {
      if (finished) return;
      if (result.firstByteMs === null) {
        const headers: Record<string, string> = { 'content-type': contentType };
        if (events) Object.assign(headers, { 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
        res.writeHead(200, headers);
        result.firstByteMs = Date.now() - startedAt;
      }
      try {
        if (events) read(events.push(chunk));
      } catch (err) {
        fail(err);
        return;
      }
      if (!res.write(chunk)) pace.wait();
    });
    body.on('end', () => {
      if (finished) return;
      if (result.firstByteMs === null) {
        fail(new UpstreamFailure('reset', 'the upstream answer ended before its first byte'));
        return;
      }
      finished = true;
      signal.removeListener('abort', onAbort);
      try {
        if (events) read(events.end());
      } catch {
        // The answer already reached the client as sent: a malformed last event tells nothing more.
      }
      res.end();
      resolve(result);
    });
    body.on('error', fail);
    if (signal.aborted) onAbort();
    else signal.once('abort', onAbort);
  });
}
