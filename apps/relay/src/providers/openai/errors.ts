import type { UpstreamError } from '../../core/provider';
import { isJsonObject, jsonObjectIn } from '../../core/json';

/**
 * OpenAI's `{"error": {"message", "type", "param", "code"}}`; some compatible servers send
 * `{"error": "<message>"}`. Undefined for any other body: the status alone describes it.
 */
export function errorOf(body: Buffer): UpstreamError | undefined {
  const error = jsonObjectIn(body.toString('utf8'))?.error;
  if (typeof error === 'string') return { message: error };
  if (!isJsonObject(error)) return undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    message: text(error.message),
    type: text(error.type),
    param: text(error.param),
    code: typeof error.code === 'string' || typeof error.code === 'number' ? error.code : undefined,
  };
}

const QUOTA_EXHAUSTED_CODES = new Set(['insufficient_quota', 'billing_not_active']);
/** OpenAI says this only when the account is out of credit (a rate limit says something else). */
const QUOTA_EXHAUSTED_TEXT = /exceeded your current quota|credit balance is too low/i;

/** 401 / 403 / quota exhausted: the channel itself is unusable, not just this request (docs/api.md 2.4). */
export function disablingReason(status: number, error: UpstreamError | undefined): string | undefined {
  if (status === 401 || status === 403) return `upstream answered ${status}`;
  const codes = [error?.code, error?.type].filter((code): code is string => typeof code === 'string');
  if (codes.some((code) => QUOTA_EXHAUSTED_CODES.has(code))) return 'upstream quota exhausted';
  if (status === 429 && QUOTA_EXHAUSTED_TEXT.test(error?.message ?? '')) return 'upstream quota exhausted';
  return undefined;
}
