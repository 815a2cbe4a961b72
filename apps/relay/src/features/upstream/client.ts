import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { isJsonObject } from '../../core/json';
import { isStreamedBody, type UpstreamBody } from '../../core/provider';
import type { CallerSignal } from './caller-signal';

export interface UpstreamTimeouts {
  connectMs: number;
  /** Until response headers arrive. */
  firstByteMs: number;
  /** Between two body chunks. */
  idleMs: number;
}

export interface UpstreamRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: UpstreamBody;
  signal: CallerSignal;
}

/** What undici sends: the bytes, or a fresh stream of a streamed body for this attempt. */
function sentBody(body: UpstreamBody): Buffer | string | Readable {
  return isStreamedBody(body) ? body.open() : body;
}

/** An upstream answer whose body is read as it arrives (streams). */
export type StreamedUpstreamResponse = Dispatcher.ResponseData;

/** An upstream answer read in full before anything looks at it (whole answers). */
export interface WholeUpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type UpstreamResponse = StreamedUpstreamResponse | WholeUpstreamResponse;

/**
 * Why an upstream call failed, as routing needs it: `connect` and `reset` may move to another
 * channel (the request did not complete), `timeout` answers 504, `aborted` means our client left.
 */
export type UpstreamFailureKind = 'connect' | 'reset' | 'timeout' | 'aborted' | 'other';

export class UpstreamFailure extends Error {
  constructor(readonly kind: UpstreamFailureKind, message: string) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Maps undici / socket errors to a failure kind; `signal` tells apart our own abort. */
export function classifyUpstreamError(err: unknown, signal?: CallerSignal): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (signal?.aborted) return new UpstreamFailure('aborted', 'client closed the request');
  const code = (err as { code?: unknown } | null)?.code;
  const causeCode = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  const codes = [code, causeCode].filter((c): c is string => typeof c === 'string');
  if (codes.some((c) => TIMEOUT_CODES.has(c))) return new UpstreamFailure('timeout', 'upstream timed out');
  if (codes.some((c) => CONNECT_CODES.has(c))) return new UpstreamFailure('connect', 'cannot connect to upstream');
  if (codes.some((c) => RESET_CODES.has(c))) return new UpstreamFailure('reset', 'upstream closed the connection');
  return new UpstreamFailure('other', 'upstream request failed');
}

/**
 * Keep-alive connection pools to the model providers (one undici Pool per origin). Connect,
 * first-byte and idle deadlines are enforced by undici itself, per request.
 */
export class UpstreamClient {
  private readonly agent: Agent;

  constructor(
    private readonly timeouts: UpstreamTimeouts,
    /** Largest whole answer read (MAX_UPSTREAM_BODY_MB): a larger one fails without being held. */
    readonly maxBodyBytes: number,
  ) {
    this.agent = new Agent({
      connect: { timeout: timeouts.connectMs },
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
    });
  }

  /** A call whose answer is relayed as it arrives (streams). */
  async post(request: UpstreamRequest): Promise<StreamedUpstreamResponse> {
    try {
      return await this.agent.request({
        origin: request.origin,
        path: request.path,
        method: 'POST',
        headers: request.headers,
        body: sentBody(request.body),
        signal: request.signal,
        headersTimeout: this.timeouts.firstByteMs,
        bodyTimeout: this.timeouts.idleMs,
      });
    } catch (err) {
      throw classifyUpstreamError(err, request.signal);
    }
  }

  /**
   * A call whose answer is only used whole. Collected by a dispatch handler, without the Readable
   * stream, async resource and promise per chunk that `request()` costs every call.
   */
  postWhole(request: UpstreamRequest): Promise<WholeUpstreamResponse> {
    return new Promise((resolve, reject) => {
      this.agent.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: 'POST',
          headers: request.headers,
          body: sentBody(request.body),
          headersTimeout: this.timeouts.firstByteMs,
          bodyTimeout: this.timeouts.idleMs,
        },
        new WholeAnswerHandler(request.signal, this.maxBodyBytes, resolve, reject),
      );
    });
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

const CLIENT_GONE = new Error('client closed the request');

function oversizedAnswer(maxBytes: number): UpstreamFailure {
  return new UpstreamFailure('other', `the upstream answer exceeded ${maxBytes / 1024 / 1024} MB`);
}

/**
 * Collects one whole answer; aborts the upstream request when the client goes away, or as soon as
 * the answer (announced or received) grows past `maxBytes`.
 */
class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  private statusCode = 0;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private headers: IncomingHttpHeaders = {};
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private readonly onAbort = () => this.controller?.abort(CLIENT_GONE);

  constructor(
    private readonly signal: CallerSignal,
    private readonly maxBytes: number,
    private readonly resolve: (response: WholeUpstreamResponse) => void,
    private readonly reject: (failure: UpstreamFailure) => void,
  ) {
    signal.once('abort', this.onAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.signal.aborted) controller.abort(CLIENT_GONE);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx answers (100 Continue) come before the real one.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    if (Number(headers['content-length']) > this.maxBytes) this.tooLarge(controller);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) this.tooLarge(controller);
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.finish()) return;
    const [only] = this.chunks;
    this.resolve({ statusCode: this.statusCode, headers: this.headers, body: only && this.chunks.length === 1 ? only : Buffer.concat(this.chunks) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.finish()) return;
    this.reject(classifyUpstreamError(error, this.signal));
  }

  /** Fails the call at once and stops reading: what came so far is dropped. */
  private tooLarge(controller: Dispatcher.DispatchController): void {
    this.chunks.length = 0;
    if (this.finish()) return;
    this.reject(oversizedAnswer(this.maxBytes));
    controller.abort(new Error('the upstream answer is too large'));
  }

  /** True when the outcome was already given. */
  private finish(): boolean {
    if (this.settled) return true;
    this.settled = true;
    this.signal.removeListener('abort', this.onAbort);
    return false;
  }
}

/**
 * Reads a whole upstream body (for non-streamed answers and error bodies). A streamed body longer
 * than `maxBytes` is an UpstreamFailure, read no further.
 */
export async function readBody(response: UpstreamResponse, signal: CallerSignal, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
  if (Buffer.isBuffer(response.body)) return response.body;
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body) {
      bytes += (chunk as Buffer).length;
      if (bytes > maxBytes) {
        response.body.destroy();
        throw oversizedAnswer(maxBytes);
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw classifyUpstreamError(err, signal);
  }
  const [only] = chunks;
  return only && chunks.length === 1 ? only : Buffer.concat(chunks);
}


/** A whole 2xx answer that must be a JSON object; UpstreamFailure('other') when it is not one. */
export function answerObjectOf(raw: Buffer): Record<string, unknown> {
  let answer: unknown;
  try {
    answer = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new UpstreamFailure('other', 'the upstream answered with invalid JSON');
  }
  if (!isJsonObject(answer)) throw new UpstreamFailure('other', 'the upstream answered with an unexpected body');
  return answer;
}
