import type { ServerResponse } from 'node:http';
import { grpcStatusName } from '@modelgate/errors';
import { sendJson } from '@modelgate/http';
import type { ChannelRecord } from '../channels/channel-cache';
import type { UpstreamError } from '../../providers/provider';

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
