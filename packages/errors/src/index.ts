import type { Dialect } from '@modelgate/schemas';
/**
 * One error class with machine codes for every service, and its four wire dialects: the `/api`
 * envelope, OpenAI's `{error: {...}}`, Google's `{error: {code, message, status}}` and Anthropic's
 * `{type: "error", error: {type, message}}`.
 */
import { isDependencyUnavailable } from './dependency';

export { isDependencyUnavailable, sqlStateOf } from './dependency';

/** `/api` envelope codes (docs/api.md 1.1) -> [HTTP status, OpenAI error type]. */
const ENVELOPE_CATALOG = {
  invalid_request: [400, 'invalid_request_error'],
  unauthorized: [401, 'invalid_request_error'],
  invalid_credentials: [401, 'invalid_request_error'],
  forbidden: [403, 'permission_error'],
  user_disabled: [403, 'permission_error'],
  not_found: [404, 'invalid_request_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  conflict: [409, 'invalid_request_error'],
  request_too_large: [413, 'invalid_request_error'],
  request_timeout: [408, 'invalid_request_error'],
  request_header_too_large: [431, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  two_factor_locked: [429, 'rate_limit_error'],
  internal_error: [500, 'server_error'],
  service_unavailable: [503, 'server_error'],
  bad_gateway: [502, 'upstream_error'],
  gateway_timeout: [504, 'upstream_error'],
} as const satisfies Record<string, readonly [number, string]>;

/** Machine code -> [HTTP status, OpenAI error type]. */
const CATALOG = {
  ...ENVELOPE_CATALOG,
  // relay codes (docs/api.md 1.3)
  invalid_api_key: [401, 'invalid_request_error'],
  invalid_json: [400, 'invalid_request_error'],
  model_not_allowed: [403, 'permission_error'],
  ip_not_allowed: [403, 'permission_error'],
  group_not_allowed: [403, 'permission_error'],
  insufficient_user_quota: [403, 'insufficient_quota'],
  /** The key's budget for its day / week / month is spent (docs/api.md 3.9.4). */
  budget_exceeded: [403, 'insufficient_quota'],
  model_price_error: [400, 'invalid_request_error'],
  model_not_found: [404, 'invalid_request_error'],
  no_available_channel: [503, 'server_error'],
  upstream_error: [502, 'upstream_error'],
  upstream_timeout: [504, 'upstream_error'],
  rate_limit_exceeded: [429, 'rate_limit_error'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof CATALOG;

/** The codes an `/api` envelope answer can carry (docs/api.md 1.1), with their HTTP status. */
export const ENVELOPE_ERROR_STATUS: Readonly<Record<keyof typeof ENVELOPE_CATALOG, number>> = Object.fromEntries(
  Object.entries(ENVELOPE_CATALOG).map(([code, [status]]) => [code, status]),
) as Record<keyof typeof ENVELOPE_CATALOG, number>;

export interface AppErrorOptions {
  /** Overrides the catalog status (an upstream 4xx relayed as is). */
  status?: number;
  /** OpenAI `param`: the offending field. */
  param?: string | null;
  /** Overrides the catalog OpenAI type. */
  type?: string;
  /** Seconds, sent as `Retry-After`. */
  retryAfter?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | null;
  readonly type: string;
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? CATALOG[code][0];
    this.type = options.type ?? CATALOG[code][1];
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter;
  }
}

/** A request body over MAX_REQUEST_BODY_MB (every service words it the same). */
export function requestTooLarge(maxBodyMb: number): AppError {
  return new AppError('request_too_large', `request body exceeds ${maxBodyMb} MB`);
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/**
 * Anything thrown that is not an AppError becomes a generic 500, or a 503 when PostgreSQL or Redis
 * is down: no stack, SQL or secret escapes.
 */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ??
    (err as { statusCode?: unknown } | null)?.statusCode;
  const type = (err as { type?: unknown } | null)?.type;
  // body-parser errors carry a status and a type; map the ones clients can cause.
  if (type === 'entity.too.large' || status === 413) return new AppError('request_too_large', 'request body too large');
  if (type === 'entity.parse.failed') return new AppError('invalid_json', 'request body is not valid JSON');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('invalid_request', 'invalid request', { status });
  }
  if (isDependencyUnavailable(err)) {
    return new AppError('service_unavailable', 'a backing service is unavailable, try again shortly', { cause: err });
  }
  return new AppError('internal_error', 'internal server error', { cause: err });
}

export interface ErrorResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

function headersOf(err: AppError): Record<string, string> {
  return err.retryAfter === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(err.retryAfter))) };
}

/** `/api` envelope (docs/api.md 1.1). */
export function toEnvelope(err: AppError): ErrorResponse {
  return {
    status: err.status,
    headers: headersOf(err),
    body: { success: false, message: err.message, code: err.code },
  };
}

/** OpenAI dialect (docs/api.md 1.3): the message ends with the request id. */
export function toOpenAI(err: AppError, requestId: string): ErrorResponse {
  return {
    status: err.status,
    headers: headersOf(err),
    body: {
      error: {
        message: `${err.message} (request id: ${requestId})`,
        type: err.type,
        param: err.param,
        code: err.code,
      },
    },
  };
}

const GRPC_BY_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  408: 'DEADLINE_EXCEEDED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function grpcStatusName(status: number): string {
  return GRPC_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}

/** Google dialect (docs/api.md 1.3). */
export function toGoogle(err: AppError): ErrorResponse {
  return {
    status: err.status,
    headers: headersOf(err),
    body: { error: { code: err.status, message: err.message, status: grpcStatusName(err.status) } },
  };
}

/** Anthropic's error types by status (docs/api.md 1.3; 413 as Anthropic's API names it). */
const ANTHROPIC_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  503: 'overloaded_error',
  529: 'overloaded_error',
};

export function anthropicErrorType(status: number): string {
  return ANTHROPIC_TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** Anthropic dialect (docs/api.md 1.3). */
export function toAnthropic(err: AppError): ErrorResponse {
  return {
    status: err.status,
    headers: headersOf(err),
    body: { type: 'error', error: { type: anthropicErrorType(err.status), message: err.message } },
  };
}

/** A relay dialect's error shape, or the `/api` envelope (docs/api.md 1.1, 1.3). */
export type ErrorDialect = 'envelope' | Dialect;

export function renderError(err: AppError, dialect: ErrorDialect, requestId: string): ErrorResponse {
  if (dialect === 'openai') return toOpenAI(err, requestId);
  if (dialect === 'gemini') return toGoogle(err);
  if (dialect === 'anthropic') return toAnthropic(err);
  return toEnvelope(err);
}

const ANTHROPIC_MESSAGES = '/v1/messages';

/**
 * The dialect a public path speaks: `/v1beta` and Gemini operations are Google, `/v1/messages*`
 * Anthropic, the rest of `/v1` OpenAI, anything else the `/api` envelope.
 */
export function dialectForPath(path: string): ErrorDialect {
  if (path.startsWith('/v1beta')) return 'gemini';
  if (path.startsWith('/v1/models/') && /:(stream)?[gG]enerateContent/.test(path)) return 'gemini';
  if (path.startsWith(ANTHROPIC_MESSAGES) && (path.length === ANTHROPIC_MESSAGES.length || path[ANTHROPIC_MESSAGES.length] === '/')) {
    return 'anthropic';
  }
  if (path.startsWith('/v1')) return 'openai';
  return 'envelope';
}
