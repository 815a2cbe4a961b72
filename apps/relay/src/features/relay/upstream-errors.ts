import type { ServerResponse } from 'node:http';
import { grpcStatusName } from '@modelgate/errors';
import { sendJson } from '@modelgate/http';
import type { ChannelRecord } from '../channels/channel-cache';

const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>]+/gi;
const KEY_PATTERNS = [/\bsk-[A-Za-z0-9_-]{6,}/g, /\bAIza[0-9A-Za-z_-]{20,}/g, /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi];

/** Upstream text shown to clients: the channel's key, other credentials and URLs are masked. */
export function maskUpstreamText(text: string, channel: ChannelRecord): string {
  let masked = text;
  if (channel.key.length >= 4) masked = masked.split(channel.key).join('[redacted]');
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

const QUOTA_EXHAUSTED_CODES = new Set(['insufficient_quota', 'billing_not_active']);
/**
 * OpenAI says this only when the account is out of credit. Google says "exceeded your current
 * quota" for per-minute limits too, so for Gemini only codes count.
 */
const OPENAI_QUOTA_EXHAUSTED_TEXT = /exceeded your current quota|credit balance is too low/i;

/** 401 / 403 / quota exhausted: the channel itself is unusable, not just this request. */
export function disablingReason(
  status: number,
  error: UpstreamErrorBody | undefined,
  kind: ChannelRecord['kind'],
): string | undefined {
  if (status === 401 || status === 403) return `upstream answered ${status}`;
  const message = typeof error?.message === 'string' ? error.message : '';
  const codes = [error?.code, error?.type].filter((c): c is string => typeof c === 'string');
  if (codes.some((c) => QUOTA_EXHAUSTED_CODES.has(c))) return 'upstream quota exhausted';
  if (kind === 'openai' && status === 429 && OPENAI_QUOTA_EXHAUSTED_TEXT.test(message)) return 'upstream quota exhausted';
  return undefined;
}

/** A non-2xx upstream answer, relayed to the client in its dialect (docs/api.md 1.3). */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    readonly error: UpstreamErrorBody | undefined,
    readonly channel: ChannelRecord,
  ) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

export function sendUpstreamError(res: ServerResponse, err: UpstreamHttpError, dialect: 'openai' | 'google', requestId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = typeof err.error?.message === 'string' && err.error.message ? err.error.message : `upstream answered ${err.status}`;
  const message = maskUpstreamText(text, err.channel);
  const body =
    dialect === 'openai'
      ? {
          error: {
            message: `${message} (request id: ${requestId})`,
            type: typeof err.error?.type === 'string' ? err.error.type : 'upstream_error',
            param: typeof err.error?.param === 'string' ? err.error.param : null,
            code: typeof err.error?.code === 'string' || typeof err.error?.code === 'number' ? err.error.code : 'upstream_error',
          },
        }
      : {
          error: {
            code: err.status,
            message,
            status: typeof err.error?.status === 'string' ? err.error.status : grpcStatusName(err.status),
          },
        };
  sendJson(res, err.status, body);
}
