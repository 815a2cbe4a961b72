import { grpcStatusName } from '@modelgate/errors';
import { upstreamErrorOf } from '../../features/relay/upstream-errors';
import type { UpstreamError } from '../../core/provider';

/** The OpenAI error type (docs/api.md 1.3) of each gRPC status Google answers with. */
const OPENAI_TYPE_BY_STATUS: Record<string, string> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  OUT_OF_RANGE: 'invalid_request_error',
  NOT_FOUND: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
  INTERNAL: 'server_error',
  UNAVAILABLE: 'server_error',
  DEADLINE_EXCEEDED: 'server_error',
};

/**
 * Google's `{"error": {"code", "message", "status"}}` (sometimes inside a one-element array).
 * `status` stays Google's gRPC name (the native Gemini surface relays it); `type` is the OpenAI one,
 * read from the status, or from the HTTP code when the status is missing; `code` is the gRPC name
 * too (OpenAI clients read codes as strings), Google's number only when no name is known.
 */
export function errorOf(body: Buffer): UpstreamError | undefined {
  const error = upstreamErrorOf(body);
  if (!error) return undefined;
  const status = typeof error.status === 'string' ? error.status : undefined;
  const code = typeof error.code === 'number' || typeof error.code === 'string' ? error.code : undefined;
  const statusName = status ?? (typeof code === 'number' ? grpcStatusName(code) : undefined);
  const type = statusName === undefined ? undefined : OPENAI_TYPE_BY_STATUS[statusName];
  const result: UpstreamError = {};
  if (typeof error.message === 'string') result.message = error.message;
  if (status !== undefined) result.status = status;
  const openAICode = statusName ?? code;
  if (openAICode !== undefined) result.code = openAICode;
  if (type !== undefined) result.type = type;
  return result;
}

/** Codes that mean the account is out of money, not just over a rate. */
const QUOTA_EXHAUSTED_CODES = new Set(['insufficient_quota', 'billing_not_active']);

/**
 * docs/api.md 2.4: 401 and 403 disable the channel; quota exhaustion only when a code says so,
 * since Google says "exceeded your current quota" for per-minute limits too.
 */
export function disablingReason(status: number, error: UpstreamError | undefined): string | undefined {
  if (status === 401 || status === 403) return `upstream answered ${status}`;
  const codes = [error?.code, error?.type, error?.status];
  if (codes.some((code) => typeof code === 'string' && QUOTA_EXHAUSTED_CODES.has(code))) return 'upstream quota exhausted';
  return undefined;
}
