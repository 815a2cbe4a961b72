import type { IncomingHttpHeaders } from 'node:http';
import { jsonObjectIn } from '../../core/json';
import type { UpstreamError } from '../../core/provider';

/** What one AWS error type stands for: the OpenAI error type, the Anthropic one, its HTTP status. */
interface AwsErrorKind {
  openai: string;
  anthropic: string;
  status: number;
}

const refused: AwsErrorKind = { openai: 'authentication_error', anthropic: 'authentication_error', status: 403 };
const overloaded: AwsErrorKind = { openai: 'server_error', anthropic: 'overloaded_error', status: 503 };
const failed: AwsErrorKind = { openai: 'server_error', anthropic: 'api_error', status: 500 };
const throttled: AwsErrorKind = { openai: 'rate_limit_error', anthropic: 'rate_limit_error', status: 429 };

/**
 * Bedrock runtime's error types (docs/api.md 1.3, 2.12): an OpenAI client sees the AWS type as
 * `code`, a Messages client the Anthropic type it stands for.
 */
const AWS_ERRORS = new Map<string, AwsErrorKind>([
  ['ThrottlingException', throttled],
  ['ValidationException', { openai: 'invalid_request_error', anthropic: 'invalid_request_error', status: 400 }],
  ['ResourceNotFoundException', { openai: 'invalid_request_error', anthropic: 'not_found_error', status: 404 }],
  ['AccessDeniedException', { openai: 'permission_error', anthropic: 'permission_error', status: 403 }],
  ['UnrecognizedClientException', refused],
  ['InvalidSignatureException', refused],
  ['IncompleteSignatureException', refused],
  ['MissingAuthenticationTokenException', refused],
  ['ExpiredTokenException', refused],
  ['ServiceQuotaExceededException', { openai: 'insufficient_quota', anthropic: 'rate_limit_error', status: 429 }],
  ['ServiceUnavailableException', overloaded],
  ['ModelNotReadyException', overloaded],
  ['InternalServerException', failed],
  ['ModelErrorException', failed],
  ['ModelStreamErrorException', failed],
  ['ModelTimeoutException', { openai: 'server_error', anthropic: 'timeout_error', status: 504 }],
]);

/** How Bedrock words a reached daily token quota: a ThrottlingException no retry within the day helps. */
const DAILY_QUOTA_TEXT = /tokens per day/i;

/**
 * AWS's answer to a bad signature goes on with the canonical request it expected, session token
 * header included: only the first paragraph is kept. Access key ids are masked wherever they appear.
 */
const DETAILS = /\n\s*\n[\s\S]*$/;
const ACCESS_KEY_ID = /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{12,}\b/g;

function safeMessage(message: string): string {
  return message.replace(DETAILS, '').replace(ACCESS_KEY_ID, '[redacted]');
}

/** `throttlingException` (event-stream exception frames) and `ValidationException:http://...` (headers) as the type's name. */
function typeName(type: string): string {
  const name = type.split(':', 1)[0]!.trim();
  const short = name.slice(name.lastIndexOf('#') + 1);
  return short.charAt(0).toUpperCase() + short.slice(1);
}

/** The HTTP status an AWS error type stands for (an in-stream exception): 500 for a type it does not know. */
export function awsErrorStatus(type: string): number {
  return AWS_ERRORS.get(typeName(type))?.status ?? failed.status;
}

/** An AWS error message with no credential in it, or undefined when the body holds none. */
export function awsErrorMessage(body: Record<string, unknown> | undefined): string | undefined {
  const message = body?.message ?? body?.Message;
  return typeof message === 'string' ? safeMessage(message) : undefined;
}

/**
 * An AWS error answer: the type from `x-amzn-ErrorType` (or the body's `__type`), the message from
 * `{message}` / `{Message}`. Undefined when it says neither.
 */
export function bedrockErrorOf(body: Buffer, headers: IncomingHttpHeaders): UpstreamError | undefined {
  const parsed = jsonObjectIn(body.toString('utf8'));
  const header = headers['x-amzn-errortype'];
  const rawType = typeof header === 'string' ? header : typeof parsed?.__type === 'string' ? parsed.__type : undefined;
  const message = awsErrorMessage(parsed);
  if (rawType === undefined && message === undefined) return undefined;
  const error: UpstreamError = {};
  if (message !== undefined) error.message = message;
  const kind = rawType === undefined ? undefined : AWS_ERRORS.get(typeName(rawType));
  if (kind) {
    error.code = typeName(rawType!);
    error.anthropicType = kind.anthropic;
    error.type = kind === throttled && DAILY_QUOTA_TEXT.test(message ?? '') ? 'insufficient_quota' : kind.openai;
  }
  return error;
}

/**
 * docs/api.md 2.4, 2.12: a refused credential (401 / 403: unknown key, bad signature, no access)
 * and an exhausted quota (ServiceQuotaExceededException, the daily token quota) disable the
 * channel; throttling and server errors only cool it down.
 */
export function bedrockDisablingReason(status: number, error: UpstreamError | undefined): string | undefined {
  if (status === 401 || status === 403) return `upstream answered ${status}`;
  if (error?.type === 'insufficient_quota') return 'upstream quota exhausted';
  return undefined;
}
