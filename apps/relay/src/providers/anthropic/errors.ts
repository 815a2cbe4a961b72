import { isJsonObject, jsonObjectIn } from '../../core/json';
import type { UpstreamError } from '../../core/provider';

/**
 * Anthropic's error types as the OpenAI error table's (docs/api.md 1.3), for answers in OpenAI's
 * shape; the Anthropic type itself stays in `code` for answers in Anthropic's (docs/api.md 2.9).
 * A billing error is OpenAI's `insufficient_quota`: retrying does not help.
 */
const OPENAI_TYPES = new Map<string, string>([
  ['invalid_request_error', 'invalid_request_error'],
  ['not_found_error', 'invalid_request_error'],
  ['request_too_large', 'invalid_request_error'],
  ['authentication_error', 'authentication_error'],
  ['permission_error', 'permission_error'],
  ['billing_error', 'insufficient_quota'],
  ['rate_limit_error', 'rate_limit_error'],
  ['api_error', 'server_error'],
  ['timeout_error', 'server_error'],
  ['overloaded_error', 'server_error'],
]);

/** Anthropic's overload, as its HTTP answers carry it (docs/api.md 2.9: passed on as is). */
const ANTHROPIC_OVERLOADED_STATUS = 529;

/** The status an Anthropic error type stands for where it is not the gateway's own 502 (an in-stream error). */
export function anthropicStreamErrorStatus(error: unknown): number | undefined {
  return isJsonObject(error) && error.type === 'overloaded_error' ? ANTHROPIC_OVERLOADED_STATUS : undefined;
}

/**
 * `error.details.error_code` of a 429 `rate_limit_error` that is no rate limit: the organization's
 * monthly spend cap, reached until the next month.
 */
const SPEND_CAP_REACHED = 'enforced_spend_limit_reached';

/**
 * Anthropic words an empty prepaid balance and a reached spend limit as a 400
 * `invalid_request_error`: only the message tells them from a bad request.
 */
const QUOTA_EXHAUSTED_TEXT = /credit balance is too low|reached your specified (?:workspace )?API usage limits/i;

/** `{"type": "error", "error": {"type", "message"}}`, or undefined when the body is not one. */
export function anthropicErrorOf(body: Buffer): UpstreamError | undefined {
  const parsed = jsonObjectIn(body.toString('utf8'));
  if (!parsed || !isJsonObject(parsed.error)) return undefined;
  const { type, message, details } = parsed.error;
  const error: UpstreamError = {};
  if (typeof message === 'string') error.message = message;
  if (typeof type === 'string') {
    error.code = type;
    error.anthropicType = type;
    error.type = isJsonObject(details) && details.error_code === SPEND_CAP_REACHED ? 'insufficient_quota' : OPENAI_TYPES.get(type);
  }
  return error;
}

/**
 * 401 / 403 and an exhausted balance or spend limit disable the channel (docs/api.md 2.4); rate
 * limits (429) and overload (529) pass.
 */
export function anthropicDisablingReason(status: number, error: UpstreamError | undefined): string | undefined {
  if (status === 401 || status === 403) return `upstream answered ${status}`;
  if (error?.type === 'insufficient_quota' || QUOTA_EXHAUSTED_TEXT.test(error?.message ?? '')) return 'upstream quota exhausted';
  return undefined;
}
