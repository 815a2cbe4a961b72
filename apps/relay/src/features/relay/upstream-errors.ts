import type { ServerResponse } from 'node:http';
import { AppError, anthropicErrorType, type ErrorDialect, grpcStatusName } from '@modelgate/errors';
import { sendJson } from '@modelgate/http';
import type { ChannelRecord } from '../channels/channel-cache';
import type { UpstreamError } from '../../core/provider';

const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>]+/gi;
const KEY_PATTERNS = [/\bsk-[A-Za-z0-9_-]{6,}/g, /\bAIza[0-9A-Za-z_-]{20,}/g, /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi];

/**
 * Upstream text shown to clients: the channel's key (and each part of a composite one, such as an
 * AWS key's `ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN`), other credentials and URLs are masked.
 */
export function maskUpstreamText(text: string, channel: Pick<ChannelRecord, 'key'>): string {
  let masked = text;
  for (const secret of [channel.key, ...channel.key.split('|')]) {
    if (secret.length >= 4) masked = masked.split(secret).join('[redacted]');
  }
  masked = masked.replace(URL_PATTERN, '[url]');
  for (const pattern of KEY_PATTERNS) masked = masked.replace(pattern, '[redacted]');
  return masked.slice(0, 1_000);
}

interface UpstreamErrorBody {
  message?: unknown;
  type?: unknown;
  param?: unknown;
  code?: unknown;
  status?: unknown;
}

/** The `error` object of an OpenAI- or Google-shaped error body, if the body is one. */
export function upstreamErrorOf(body: Buffer): UpstreamErrorBody | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const error = Array.isArray(parsed) ? (parsed[0] as { error?: unknown })?.error : (parsed as { error?: unknown })?.error;
    if (error && typeof error === 'object') return error as UpstreamErrorBody;
    if (typeof error === 'string') return { message: error };
  } catch {
    // not JSON: the status alone describes it
  }
  return undefined;
}

/** A non-2xx upstream answer, relayed to the client in its dialect (docs/api.md 1.3). */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: UpstreamError | undefined,
    readonly channel: ChannelRecord,
  ) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

/**
 * Every attempt failed, the last with this 5xx answer: 502 `upstream_error` (docs/api.md 1.3),
 * unless the client's dialect passes the answer on (see relayedUpstreamAnswer).
 */
export class UpstreamExhaustedError extends AppError {
  constructor(readonly lastAnswer: UpstreamHttpError) {
    super('upstream_error', `the upstream failed on every attempt (last: HTTP ${lastAnswer.status})`);
  }
}

/** Anthropic's "overloaded" status. */
const ANTHROPIC_OVERLOADED = 529;

/**
 * The upstream answer a client gets (masked) instead of a gateway error: a 4xx that was not retried
 * or a 429 on the last attempt; on /v1/messages also an Anthropic-shaped 529 `overloaded_error`
 * on the last attempt, which Anthropic's SDKs know (docs/api.md 2.9).
 */
export function relayedUpstreamAnswer(err: unknown, dialect: ErrorDialect): UpstreamHttpError | undefined {
  if (err instanceof UpstreamHttpError) return err;
  if (dialect !== 'anthropic' || !(err instanceof UpstreamExhaustedError)) return undefined;
  const last = err.lastAnswer;
  return last.status === ANTHROPIC_OVERLOADED && last.error?.anthropicType !== undefined ? last : undefined;
}

/** The error body of each client dialect for an upstream answer (message masked). */
function upstreamErrorBody(err: UpstreamHttpError, dialect: Exclude<ErrorDialect, 'envelope'>, message: string, requestId: string): unknown {
  const { error, status } = err;
  switch (dialect) {
    case 'openai':
      return {
        error: {
          message: `${message} (request id: ${requestId})`,
          type: typeof error?.type === 'string' ? error.type : 'upstream_error',
          param: typeof error?.param === 'string' ? error.param : null,
          code: typeof error?.code === 'string' || typeof error?.code === 'number' ? error.code : 'upstream_error',
        },
      };
    case 'gemini':
      return { error: { code: status, message, status: typeof error?.status === 'string' ? error.status : grpcStatusName(status) } };
    case 'anthropic': {
      // The upstream's own Anthropic type where it gave one (an Anthropic channel, Claude on a cloud); others' by status.
      const type = error?.anthropicType ?? anthropicErrorType(status);
      return { type: 'error', error: { type, message } };
    }
  }
}

export function sendUpstreamError(res: ServerResponse, err: UpstreamHttpError, dialect: Exclude<ErrorDialect, 'envelope'>, requestId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = typeof err.error?.message === 'string' && err.error.message ? err.error.message : `upstream answered ${err.status}`;
  sendJson(res, err.status, upstreamErrorBody(err, dialect, maskUpstreamText(text, err.channel), requestId));
}
