// Bedrock's error answers (docs/api.md 1.3, 2.4, 2.12): the AWS error type and message read into the
// OpenAI type and the Anthropic one, which failures disable the channel, and no credential in a message.
import { bedrockProvider } from '../../src/providers/bedrock';

const errorOf = (body: unknown, type?: string) =>
  bedrockProvider.errorOf(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), type === undefined ? {} : { 'x-amzn-errortype': type });

const CORAL = ':http://internal.amazon.com/coral/com.amazon.bedrock/';

describe('bedrockProvider.errorOf', () => {
  it.each([
    ['ThrottlingException', 'rate_limit_error', 'rate_limit_error'],
    ['ValidationException', 'invalid_request_error', 'invalid_request_error'],
    ['ResourceNotFoundException', 'invalid_request_error', 'not_found_error'],
    ['AccessDeniedException', 'permission_error', 'permission_error'],
    ['UnrecognizedClientException', 'authentication_error', 'authentication_error'],
    ['InvalidSignatureException', 'authentication_error', 'authentication_error'],
    ['ServiceQuotaExceededException', 'insufficient_quota', 'rate_limit_error'],
    ['ServiceUnavailableException', 'server_error', 'overloaded_error'],
    ['ModelNotReadyException', 'server_error', 'overloaded_error'],
    ['InternalServerException', 'server_error', 'api_error'],
  ])('reads %s (x-amzn-ErrorType, suffix stripped) as OpenAI %s / Anthropic %s', (type, openai, anthropic) => {
    expect(errorOf({ message: 'Something happened.' }, `${type}${CORAL}`)).toEqual({ message: 'Something happened.', type: openai, code: type, anthropicType: anthropic });
  });

  it("reads `Message`, the body's `__type`, and leaves a type it does not know unmapped", () => {
    expect(errorOf({ Message: 'Bad input' }, 'ValidationException')).toEqual({ message: 'Bad input', type: 'invalid_request_error', code: 'ValidationException', anthropicType: 'invalid_request_error' });
    expect(errorOf({ __type: 'com.amazon.coral.service#ExpiredTokenException', message: 'expired' })).toMatchObject({ type: 'authentication_error' });
    expect(errorOf({ message: 'new' }, 'BrandNewException')).toEqual({ message: 'new' });
  });

  it('is undefined for a body that reports nothing', () => {
    expect(errorOf('<html>Bad Gateway</html>')).toBeUndefined();
    expect(errorOf({})).toBeUndefined();
  });

  it("reads the daily token quota (a ThrottlingException) as an exhausted quota", () => {
    expect(errorOf({ message: 'Too many tokens per day, please wait before trying again.' }, 'ThrottlingException')).toMatchObject({ type: 'insufficient_quota', code: 'ThrottlingException', anthropicType: 'rate_limit_error' });
  });

  it('keeps no credential of a signature mismatch: only its first paragraph, access key ids masked', () => {
    const message = [
      'The request signature we calculated does not match the signature you provided (key AKIAIOSFODNN7EXAMPLE).',
      '',
      "The Canonical String for this request should have been\n'POST\n/model/x/invoke\n\nhost:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-security-token:IQoJb3JpZ2luX2VjEXAMPLETOKEN\n'",
      '',
      "The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20250101T000000Z\n'",
    ].join('\n');
    const error = errorOf({ message }, 'InvalidSignatureException');
    expect(error?.message).toBe('The request signature we calculated does not match the signature you provided (key [redacted]).');
  });
});

describe('bedrockProvider.disablingReason', () => {
  const reasonFor = (status: number, type?: string, message = 'x') => bedrockProvider.disablingReason(status, errorOf({ message }, type));

  it.each([
    [403, 'AccessDeniedException'],
    [403, 'UnrecognizedClientException'],
    [403, 'InvalidSignatureException'],
    [401, undefined],
  ])('disables the channel on %d %s', (status, type) => {
    expect(reasonFor(status, type)).toBe(`upstream answered ${status}`);
  });

  it('disables it on an exhausted quota', () => {
    expect(reasonFor(400, 'ServiceQuotaExceededException')).toBe('upstream quota exhausted');
    expect(reasonFor(429, 'ThrottlingException', 'Too many tokens per day, please wait before trying again.')).toBe('upstream quota exhausted');
  });

  it.each([
    [429, 'ThrottlingException'],
    [400, 'ValidationException'],
    [500, 'InternalServerException'],
    [503, 'ServiceUnavailableException'],
    [429, 'ModelNotReadyException'],
  ])('only lets %d %s fail this request', (status, type) => {
    expect(reasonFor(status, type)).toBeUndefined();
  });
});
