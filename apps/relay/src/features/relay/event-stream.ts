import { AppError } from '@modelgate/errors';
import { classifyUpstreamError, UpstreamFailure, type UpstreamResponse } from '../upstream/client';
import type { SseEvent } from '../../core/provider';
import { SseParser } from '../upstream/sse';
import type { ChatUsage } from '../../core/chat';
import { jsonObjectIn, objectOf } from '../../core/json';
import { ClientPace } from './client-pace';
import type { Delivery, DeliveryContext } from './relay-call';
import { countDeliveredTokens } from './tokens';
import { maskUpstreamText } from './upstream-errors';

/** What a dialect does with the events of one upstream stream. */
export interface StreamDialect {
  /**
   * One upstream event: the text to write to the client now, null to write nothing, or a thrown
   * StreamEventError when the event reports a failure (malformed, an error object).
   */
  onEvent(event: SseEvent): string | null;
  /** True once the upstream said it is done (`[DONE]`); later bytes are ignored. */
  readonly done: boolean;
  /**
   * Written after the last event of a stream that ended normally. Throws StreamEventError when the
   * upstream ended it without saying the answer was complete: the client then gets `errorTail`, and
   * the stream is billed as cut.
   */
  tail(): string;
  /** Written when the upstream fails after the client got its first byte. */
  errorTail(error: AppError): string;
}

/** A stream dialect that also knows what the stream is billed for. */
export interface BilledStreamDialect extends StreamDialect {
  /**
   * The provider reported its output count (a cut stream that did is billed even without delivered
   * text); a prompt count alone does not count, as it comes before anything is generated.
   */
  readonly sawUsage: boolean;
  /** What the stream is billed for; `cut`: the client left or the upstream broke mid-stream. */
  billedUsage(cut: boolean): ChatUsage;
}

/**
 * What an answer is billed for (docs/api.md 2.5): the provider's counts, and what it did not report
 * counted. A cut stream may end before the provider's final count (Anthropic sends output tokens
 * last): it is charged at least what was delivered.
 */
export function billedUsageOf(
  reported: Partial<ChatUsage>,
  cut: boolean,
  delivered: () => string[],
  promptTokens: () => number,
): ChatUsage {
  let completionTokens = reported.completionTokens;
  if (completionTokens === undefined || cut) completionTokens = Math.max(completionTokens ?? 0, countDeliveredTokens(delivered()));
  const usage: ChatUsage = {
    promptTokens: reported.promptTokens ?? promptTokens(),
    completionTokens,
    cachedTokens: reported.cachedTokens ?? 0,
    cacheWriteTokens: reported.cacheWriteTokens ?? 0,
    reasoningTokens: reported.reasoningTokens ?? 0,
  };
  if (reported.serverToolCalls) usage.serverToolCalls = reported.serverToolCalls;
  return usage;
}

/** An upstream event that is malformed or reports a failure; its message is masked before a client sees it. */
export class StreamEventError extends Error {
  constructor(
    message: string,
    /**
     * The HTTP status the reported failure stands for, when the provider says (an Anthropic
     * `overloaded_error` is 529): the client's error event then names it as the provider did.
     */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'StreamEventError';
  }
}

export function malformedEvent(): StreamEventError {
  return new StreamEventError('the upstream sent a malformed event');
}

/** An event's data as a JSON object; StreamEventError when it is anything else. */
export function eventObjectOf(data: string): Record<string, unknown> {
  const parsed = jsonObjectIn(data);
  if (!parsed) throw malformedEvent();
  return parsed;
}

/**
 * The failure an in-stream error reports (an object with a `message`, or a bare message), in the
 * upstream's words; `status`: what it stands for, when the provider's error type says.
 */
export function reportedStreamError(error: unknown, status?: number): StreamEventError {
  const message = typeof error === 'string' ? error : objectOf(error).message;
  return new StreamEventError(typeof message === 'string' ? `upstream error: ${message}` : 'the upstream reported an error', status);
}

export interface StreamResult {
  /** Milliseconds from the request's start to the first byte sent to the client. */
  firstByteMs: number | null;
  /** The client left mid-stream. */
  clientAborted: boolean;
  /** The upstream failed after the first byte (reported to the client in-stream). */
  failure: AppError | undefined;
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
};

function failureOf(err: unknown): AppError {
  if (err instanceof StreamEventError) return new AppError('upstream_error', err.message, { status: err.status });
  const failure = err instanceof UpstreamFailure ? err : classifyUpstreamError(err);
  return failure.kind === 'timeout'
    ? new AppError('upstream_timeout', 'upstream stream stalled')
    : new AppError('upstream_error', 'upstream stream failed');
}

/**
 * Relays an upstream event stream (SSE, or the provider's framing) event by event. The client's response starts with the first event,
 * so a failure before it is thrown (and may be retried on another channel); after it, failures end
 * the stream with the dialect's error event. Either way an upstream's words are masked (docs/api.md
 * 1.3). While the client cannot take more, the upstream body is paused, so a slow reader slows the
 * upstream and memory stays bounded.
 */
export function relayEventStream(
  upstream: UpstreamResponse,
  { res, signal, startedAt, channel, framing }: DeliveryContext,
  dialect: StreamDialect,
): Promise<StreamResult> {
  const body = upstream.body;
  // The relay pipeline reads an upstream answer whole only when the call is not a stream.
  if (Buffer.isBuffer(body)) return Promise.reject(new Error('a whole upstream answer cannot be relayed as a stream'));
  const parser = framing?.() ?? new SseParser();
  const result: StreamResult = { firstByteMs: null, clientAborted: false, failure: undefined };

  return new Promise<StreamResult>((resolve, reject) => {
    let finished = false;
    const pace = new ClientPace(body, res, () => finished || signal.aborted);

    const write = (text: string): boolean => {
      if (result.firstByteMs === null) {
        res.writeHead(200, SSE_HEADERS);
        result.firstByteMs = Date.now() - startedAt;
      }
      return res.write(text);
    };
    const handle = (events: SseEvent[]): boolean => {
      let more = true;
      for (const event of events) {
        if (dialect.done) break;
        const text = dialect.onEvent(event);
        if (text) more = write(text) && more;
      }
      return more;
    };
    const complete = () => {
      if (finished) return;
      if (result.firstByteMs === null && !dialect.done) {
        finished = true;
        body.destroy();
        reject(new UpstreamFailure('reset', 'upstream stream ended before its first event'));
        return;
      }
      let tail: string;
      try {
        tail = dialect.tail();
      } catch (err) {
        fail(err);
        return;
      }
      finished = true;
      write(tail);
      res.end();
      // The rest of the body (normally nothing after [DONE]) is drained so the connection is reused.
      resolve(result);
    };
    const fail = (thrown: unknown) => {
      if (finished) return;
      finished = true;
      body.destroy();
      const err = thrown instanceof StreamEventError ? new StreamEventError(maskUpstreamText(thrown.message, channel), thrown.status) : thrown;
      if (signal.aborted) {
        result.clientAborted = true;
        resolve(result);
      } else if (result.firstByteMs === null) {
        reject(err instanceof StreamEventError ? new UpstreamFailure('other', err.message) : classifyUpstreamError(err, signal));
      } else {
        result.failure = failureOf(err);
        write(dialect.errorTail(result.failure));
        res.end();
        resolve(result);
      }
    };

    body.on('data', (chunk: Buffer) => {
      if (finished) return;
      let more: boolean;
      try {
        more = handle(parser.push(chunk));
      } catch (err) {
        fail(err);
        return;
      }
      if (dialect.done) {
        complete();
      } else if (!more) {
        pace.wait();
      }
    });
    body.on('end', () => {
      if (finished) return;
      try {
        handle(parser.end());
      } catch (err) {
        fail(err);
        return;
      }
      complete();
    });
    body.on('error', fail);
    const onAbort = () => fail(new UpstreamFailure('aborted', 'client closed the request'));
    if (signal.aborted) onAbort();
    else signal.once('abort', onAbort);
  });
}

/**
 * Whether a delivery is charged (docs/api.md 2.5, 2.14): a cut stream is charged for what was
 * generated and for the server tools the provider ran for it (billed to us even when the client left
 * before any text); one that did neither costs nothing.
 */
export function isBillable(cut: boolean, usage: ChatUsage, sawUsage = false): boolean {
  if (!cut || sawUsage || usage.completionTokens > 0) return true;
  for (const tool in usage.serverToolCalls) if (usage.serverToolCalls[tool]! > 0) return true;
  return false;
}

/** Relays a stream and tells what it delivered, and whether it is charged (`isBillable`). */
export async function deliverEventStream(upstream: UpstreamResponse, context: DeliveryContext, dialect: BilledStreamDialect): Promise<Delivery> {
  const result = await relayEventStream(upstream, context, dialect);
  const cut = result.clientAborted || result.failure !== undefined;
  const usage = dialect.billedUsage(cut);
  return {
    usage,
    firstByteMs: result.firstByteMs,
    billable: isBillable(cut, usage, dialect.sawUsage),
    streamFailure: result.failure,
  };
}
