import { anthropicProvider } from '../../src/providers/anthropic';
import type { UpstreamError } from '../../src/core/provider';

function anthropicError(type: string, message: string, extra: Record<string, unknown> = {}): Buffer {
  return Buffer.from(JSON.stringify({ type: 'error', error: { type, message, ...extra }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' }));
}

describe('Anthropic errors', () => {
  it.each<[string, Buffer, UpstreamError | undefined]>([
    [
      'invalid_request_error',
      anthropicError('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'),
      { message: 'messages: roles must alternate between "user" and "assistant"', type: 'invalid_request_error', code: 'invalid_request_error', anthropicType: 'invalid_request_error' },
    ],
    [
      'authentication_error',
      anthropicError('authentication_error', 'invalid x-api-key'),
      { message: 'invalid x-api-key', type: 'authentication_error', code: 'authentication_error', anthropicType: 'authentication_error' },
    ],
    [
      'permission_error',
      anthropicError('permission_error', 'Your API key does not have permission to use the specified resource.'),
      { message: 'Your API key does not have permission to use the specified resource.', type: 'permission_error', code: 'permission_error', anthropicType: 'permission_error' },
    ],
    [
      'not_found_error',
      anthropicError('not_found_error', 'model: claude-nope'),
      { message: 'model: claude-nope', type: 'invalid_request_error', code: 'not_found_error', anthropicType: 'not_found_error' },
    ],
    [
      'request_too_large',
      anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
      { message: 'Request exceeds the maximum allowed number of bytes.', type: 'invalid_request_error', code: 'request_too_large', anthropicType: 'request_too_large' },
    ],
    [
      'rate_limit_error',
      anthropicError('rate_limit_error', 'This request would exceed the rate limit for your organization.'),
      { message: 'This request would exceed the rate limit for your organization.', type: 'rate_limit_error', code: 'rate_limit_error', anthropicType: 'rate_limit_error' },
    ],
    [
      'a monthly spend cap, worded as a rate limit',
      anthropicError('rate_limit_error', 'You have reached your monthly spend limit.', { details: { error_code: 'enforced_spend_limit_reached', anthropicType: 'enforced_spend_limit_reached' } }),
      { message: 'You have reached your monthly spend limit.', type: 'insufficient_quota', code: 'rate_limit_error', anthropicType: 'rate_limit_error' },
    ],
    [
      'billing_error',
      anthropicError('billing_error', 'Your organization has a billing issue.'),
      { message: 'Your organization has a billing issue.', type: 'insufficient_quota', code: 'billing_error', anthropicType: 'billing_error' },
    ],
    ['api_error', anthropicError('api_error', 'Internal server error'), { message: 'Internal server error', type: 'server_error', code: 'api_error', anthropicType: 'api_error' }],
    ['overloaded_error', anthropicError('overloaded_error', 'Overloaded'), { message: 'Overloaded', type: 'server_error', code: 'overloaded_error', anthropicType: 'overloaded_error' }],
    ['an error type added later', anthropicError('future_error', 'New'), { message: 'New', type: undefined, code: 'future_error', anthropicType: 'future_error' }],
    ['an error without a type', Buffer.from('{"error":{"message":"bad"}}'), { message: 'bad' }],
    ['a body that is not JSON', Buffer.from('<html>502 Bad Gateway</html>'), undefined],
    ['JSON without an error object', Buffer.from('{"type":"error","error":"boom"}'), undefined],
  ])('reads %s', (_name, body, expected) => {
    expect(anthropicProvider.errorOf(body, {})).toEqual(expected);
  });

  const errorOf = (type: string, message: string, extra?: Record<string, unknown>) => anthropicProvider.errorOf(anthropicError(type, message, extra), {});

  it.each<[string, number, UpstreamError | undefined, string | undefined]>([
    ['a refused key', 401, errorOf('authentication_error', 'invalid x-api-key'), 'upstream answered 401'],
    ['a forbidden key', 403, errorOf('permission_error', 'not allowed'), 'upstream answered 403'],
    ['a 403 without a body', 403, undefined, 'upstream answered 403'],
    [
      'an empty credit balance',
      400,
      errorOf('invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'),
      'upstream quota exhausted',
    ],
    [
      'a workspace spend limit',
      400,
      errorOf('invalid_request_error', 'You have reached your specified workspace API usage limits. You will regain access on 2026-06-01 at 00:00 UTC.'),
      'upstream quota exhausted',
    ],
    ['a billing error', 402, errorOf('billing_error', 'Your organization has a billing issue.'), 'upstream quota exhausted'],
    [
      'a monthly spend cap',
      429,
      errorOf('rate_limit_error', 'Monthly spend cap reached.', { details: { error_code: 'enforced_spend_limit_reached', anthropicType: 'enforced_spend_limit_reached' } }),
      'upstream quota exhausted',
    ],
    ['a rate limit', 429, errorOf('rate_limit_error', 'This request would exceed the rate limit for your organization.'), undefined],
    ['an overload', 529, errorOf('overloaded_error', 'Overloaded'), undefined],
    ['a server error', 500, errorOf('api_error', 'Internal server error'), undefined],
    ['a bad request', 400, errorOf('invalid_request_error', 'max_tokens: 100000 > 64000, which is the maximum allowed'), undefined],
    ['an unknown model', 404, errorOf('not_found_error', 'model: claude-nope'), undefined],
    ['a 502 without a body', 502, undefined, undefined],
  ])('disabling: %s (%i) -> %s', (_name, status, error, reason) => {
    expect(anthropicProvider.disablingReason(status, error)).toBe(reason);
  });
});
