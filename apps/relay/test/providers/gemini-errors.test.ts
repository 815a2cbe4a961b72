// Google error bodies (docs/api.md 1.3) and the auto-disable rule for Gemini channels (docs/api.md 2.4).
import type { UpstreamError } from '../../src/core/provider';
import { geminiProvider } from '../../src/providers/gemini';

function googleError(code: number, status: string, message = 'something'): Record<string, unknown> {
  return { error: { code, message, status } };
}

describe('Gemini error bodies', () => {
  it.each<[number, string, string]>([
    [400, 'INVALID_ARGUMENT', 'invalid_request_error'],
    [400, 'FAILED_PRECONDITION', 'invalid_request_error'],
    [400, 'OUT_OF_RANGE', 'invalid_request_error'],
    [404, 'NOT_FOUND', 'invalid_request_error'],
    [401, 'UNAUTHENTICATED', 'authentication_error'],
    [403, 'PERMISSION_DENIED', 'permission_error'],
    [429, 'RESOURCE_EXHAUSTED', 'rate_limit_error'],
    [500, 'INTERNAL', 'server_error'],
    [503, 'UNAVAILABLE', 'server_error'],
    [504, 'DEADLINE_EXCEEDED', 'server_error'],
  ])('%i %s -> OpenAI type %s, gRPC status kept', (code, status, type) => {
    const body = Buffer.from(JSON.stringify(googleError(code, status, 'Quota exceeded for metric')));
    expect(geminiProvider.errorOf(body, {})).toEqual({ message: 'Quota exceeded for metric', status, code: status, type });
  });

  it.each<[string, unknown, UpstreamError | undefined]>([
    [
      'an error wrapped in a one-element array',
      [googleError(400, 'INVALID_ARGUMENT', 'bad')],
      { message: 'bad', status: 'INVALID_ARGUMENT', code: 'INVALID_ARGUMENT', type: 'invalid_request_error' },
    ],
    ['a status Google has no OpenAI type for', googleError(409, 'ABORTED', 'retry'), { message: 'retry', status: 'ABORTED', code: 'ABORTED' }],
    ['no status: the type follows the HTTP code', { error: { code: 429, message: 'slow down' } }, { message: 'slow down', code: 'RESOURCE_EXHAUSTED', type: 'rate_limit_error' }],
    ['an error given as text', { error: 'bad key' }, { message: 'bad key' }],
    ['JSON without an error', { candidates: [] }, undefined],
  ])('%s', (_, body, expected) => {
    expect(geminiProvider.errorOf(Buffer.from(JSON.stringify(body)), {})).toEqual(expected);
  });

  it('reads nothing from a body that is not JSON', () => {
    expect(geminiProvider.errorOf(Buffer.from('<html>502 Bad Gateway</html>'), {})).toBeUndefined();
  });
});

describe('Gemini channel disabling', () => {
  it.each<[number, UpstreamError | undefined, string | undefined]>([
    [401, { message: 'API key not valid', status: 'UNAUTHENTICATED', code: 401 }, 'upstream answered 401'],
    [403, undefined, 'upstream answered 403'],
    [429, { message: 'You exceeded your current quota, please check your plan', status: 'RESOURCE_EXHAUSTED', code: 429, type: 'rate_limit_error' }, undefined],
    [429, { message: 'out of credit', code: 'insufficient_quota' }, 'upstream quota exhausted'],
    [400, { message: 'billing', status: 'billing_not_active' }, 'upstream quota exhausted'],
    [400, { message: 'billing', type: 'billing_not_active' }, 'upstream quota exhausted'],
    [400, { message: 'bad request', status: 'INVALID_ARGUMENT', code: 400 }, undefined],
    [500, undefined, undefined],
  ])('%i %j -> %s', (status, error, reason) => {
    expect(geminiProvider.disablingReason(status, error)).toBe(reason);
  });
});
