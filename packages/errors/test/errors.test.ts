import { AppError, dialectForPath, renderError, toAppError } from '../src';

describe('AppError rendering', () => {
  const err = new AppError('model_not_allowed', 'model gpt-x is not allowed for this key', { param: 'model' });

  it('renders the /api envelope', () => {
    expect(renderError(err, 'envelope', 'rid')).toEqual({
      status: 403,
      headers: {},
      body: { success: false, message: 'model gpt-x is not allowed for this key', code: 'model_not_allowed' },
    });
  });

  it('renders the OpenAI shape with the request id in the message', () => {
    expect(renderError(err, 'openai', 'rid-1').body).toEqual({
      error: {
        message: 'model gpt-x is not allowed for this key (request id: rid-1)',
        type: 'permission_error',
        param: 'model',
        code: 'model_not_allowed',
      },
    });
  });

  it('renders the Google shape', () => {
    expect(renderError(new AppError('upstream_timeout', 'timed out'), 'gemini', 'x').body).toEqual({
      error: { code: 504, message: 'timed out', status: 'DEADLINE_EXCEEDED' },
    });
  });

  it('renders the Anthropic shape with the type for the status', () => {
    expect(renderError(new AppError('request_too_large', 'too big'), 'anthropic', 'x')).toEqual({
      status: 413,
      headers: {},
      body: { type: 'error', error: { type: 'request_too_large', message: 'too big' } },
    });
    expect(renderError(err, 'anthropic', 'x').body).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: 'model gpt-x is not allowed for this key' },
    });
    expect(renderError(new AppError('no_available_channel', 'busy'), 'anthropic', 'x').body).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(renderError(new AppError('upstream_timeout', 'slow'), 'anthropic', 'x').body).toMatchObject({ error: { type: 'api_error' } });
    expect(renderError(new AppError('request_header_too_large', 'long'), 'anthropic', 'x')).toMatchObject({
      status: 431,
      body: { error: { type: 'invalid_request_error' } },
    });
  });

  it('sends Retry-After for rate limits', () => {
    expect(renderError(new AppError('rate_limited', 'slow down', { retryAfter: 12.2 }), 'envelope', 'x').headers).toEqual({
      'Retry-After': '13',
    });
  });

  it('hides unknown errors behind a generic 500', () => {
    const mapped = toAppError(new Error('duplicate key value violates unique constraint "users_pkey" SELECT *'));
    expect(mapped.status).toBe(500);
    expect(mapped.message).toBe('internal server error');
  });

  it('maps paths to dialects', () => {
    expect(dialectForPath('/v1/completions')).toBe('openai');
    expect(dialectForPath('/v1beta/models/gemini:generateContent')).toBe('gemini');
    expect(dialectForPath('/v1/models/gemini-2.5-flash:generateContent')).toBe('gemini');
    expect(dialectForPath('/api/user/self')).toBe('envelope');
    expect(dialectForPath('/v1/messages')).toBe('anthropic');
    expect(dialectForPath('/v1/messages/count_tokens')).toBe('anthropic');
    expect(dialectForPath('/v1/messagesx')).toBe('openai');
    expect(dialectForPath('/')).toBe('envelope');
  });
});
