import type { TokenView } from '@modelgate/schemas/api';
import { ApiClient, ApiError } from '../src';

interface SentRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  credentials?: RequestInit['credentials'];
}

/** A fetch that records each request and answers with `answer`. */
function fakeFetch(answer: () => Response) {
  const sent: SentRequest[] = [];
  const fetch = async (url: string | URL | Request, init: RequestInit = {}) => {
    sent.push({ url: String(url), method: init.method ?? 'GET', headers: init.headers as Record<string, string>, body: init.body as string | undefined, credentials: init.credentials });
    return answer();
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers } });
const ok = (data: unknown) => json({ success: true, message: '', data });

const token: TokenView = {
  id: 7, user_id: 1, name: 'ci', key: 'sk-abc', status: 1, created_at: 1, accessed_at: null, expired_time: -1, remain_quota: 0,
  used_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '',
  rpm_limit: 0, tpm_limit: 0, max_concurrency: 0, budget_usd: null, budget_period: 'month', budget_used_quota: 0, limits_set_by_admin: false,
};

describe('ApiClient', () => {
  it('sends the JSON body with the caller\'s identity and cookies, and returns the envelope\'s data', async () => {
    const { fetch, sent } = fakeFetch(() => ok(token));
    const client = new ApiClient({ baseUrl: 'https://gate.example/', fetch, userId: 1, accessToken: 'at-1' });
    const created: TokenView = await client.call('post /api/token', { body: { name: 'ci', unlimited_quota: true } });
    expect(created).toEqual(token);
    expect(sent).toEqual([
      {
        url: 'https://gate.example/api/token',
        method: 'POST',
        headers: { Accept: 'application/json', 'New-Api-User': '1', Authorization: 'Bearer at-1', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'ci', unlimited_quota: true }),
        credentials: 'include',
      },
    ]);
  });

  it('fills path parameters and leaves undefined query parameters out', async () => {
    const { fetch, sent } = fakeFetch(() => ok(null));
    const client = new ApiClient({ fetch });
    await client.call('delete /api/token/:id', { params: { id: '7' } });
    await client.call('get /api/log/self', { query: { p: '2', page_size: undefined, model_name: 'gpt 4o' } });
    await client.call('get /api/token');
    expect(sent.map((request) => `${request.method} ${request.url}`)).toEqual([
      'DELETE /api/token/7',
      'GET /api/log/self?p=2&model_name=gpt+4o',
      'GET /api/token',
    ]);
    expect(sent[0]?.headers).toEqual({ Accept: 'application/json' });
  });

  it('throws ApiError with the envelope\'s code, message and Retry-After', async () => {
    const { fetch } = fakeFetch(() => json({ success: false, message: 'too many attempts', code: 'rate_limited' }, 429, { 'Retry-After': '42' }));
    const failure = new ApiClient({ fetch }).call('post /api/user/login', { body: { username: 'ann', password: 'x' } });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 429, code: 'rate_limited', message: 'too many attempts', retryAfter: 42 });
  });

  it('treats a failure envelope as a failure even with status 200', async () => {
    const { fetch } = fakeFetch(() => json({ success: false, message: 'no', code: 'forbidden' }));
    await expect(new ApiClient({ fetch }).call('get /api/user/self')).rejects.toMatchObject({ status: 200, code: 'forbidden', message: 'no' });
  });

  it('throws invalid_response for an answer that is not JSON or not an envelope', async () => {
    const html = fakeFetch(() => new Response('<h1>Bad gateway</h1>', { status: 502, headers: { 'Content-Type': 'text/html' } }));
    await expect(new ApiClient({ fetch: html.fetch }).call('get /api/status')).rejects.toMatchObject({ status: 502, code: 'invalid_response' });
    const bare = fakeFetch(() => json({ id: 1 }));
    await expect(new ApiClient({ fetch: bare.fetch }).call('get /api/status')).rejects.toMatchObject({ status: 200, code: 'invalid_response' });
  });

  it('returns a CSV export as text, and its JSON failure as ApiError', async () => {
    const csv = fakeFetch(() => new Response('id,model_name\r\n1,gpt-4o\r\n', { headers: { 'Content-Type': 'text/csv; charset=utf-8' } }));
    const text: string = await new ApiClient({ fetch: csv.fetch }).call('get /api/log/self/export', { query: { type: 2 } });
    expect(text).toBe('id,model_name\r\n1,gpt-4o\r\n');
    expect(csv.sent[0]?.headers.Accept).toBe('text/csv');
    const failed = fakeFetch(() => json({ success: false, message: 'log in first', code: 'unauthorized' }, 401));
    await expect(new ApiClient({ fetch: failed.fetch }).call('get /api/log/self/export')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('returns a raw JSON answer whole', async () => {
    const { fetch } = fakeFetch(() => json({ openapi: '3.1.0' }));
    await expect(new ApiClient({ fetch }).call('get /api/openapi.json')).resolves.toEqual({ openapi: '3.1.0' });
  });

  it('types inputs and results from the operation table', async () => {
    const { fetch } = fakeFetch(() => ok(token));
    const client = new ApiClient({ fetch });
    // @ts-expect-error: an unknown operation
    await expect(client.call('get /api/nothing')).rejects.toThrow(TypeError);
    // @ts-expect-error: the body needs a name
    await client.call('post /api/token', { body: { unlimited_quota: true } });
    // @ts-expect-error: a key has no `models` field
    await client.call('post /api/token', { body: { name: 'x', models: 'a' } });
    // @ts-expect-error: the path parameter is required
    await expect(client.call('get /api/token/:id')).rejects.toThrow('missing path parameter id');
    // @ts-expect-error: this operation takes no body
    await client.call('get /api/user/self', { body: {} });
    const created = await client.call('post /api/token', { body: { name: 'x' } });
    // @ts-expect-error: the result is a TokenView, whose id is a number
    const id: string = created.id;
    expect(id).toBe(7);
  });
});
