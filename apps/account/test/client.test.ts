import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient, ApiError } from '@modelgate/client';
import { createUser, TEST_PASSWORD } from '@modelgate/testing';
import { createTestAccount } from './support/app';
import { ROLE } from './support/users';

// @modelgate/client against the real service on a port: what the console will do, minus the browser.
const account = createTestAccount();
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer(account.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => account.reset());
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await account.close();
});

/** A fetch that keeps the cookies it is given, as a browser does for the session. */
function cookieKeepingFetch(): typeof fetch {
  const cookies = new Map<string, string>();
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size) headers.set('Cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const separator = pair.indexOf('=');
      cookies.set(pair.slice(0, separator), pair.slice(separator + 1));
    }
    return response;
  };
}

/** A client holding a session: logged in through the API, `New-Api-User` set from the answer. */
async function loggedInClient(username: string, password = TEST_PASSWORD): Promise<ApiClient> {
  const client = new ApiClient({ baseUrl, fetch: cookieKeepingFetch() });
  const login = await client.call('post /api/user/login', { body: { username, password } });
  if (!('id' in login)) throw new Error(`login of ${username} asked for a second factor`);
  client.userId = login.id;
  return client;
}

describe('@modelgate/client against the account service', () => {
  it('registers, logs in, creates and lists API keys', async () => {
    await new ApiClient({ baseUrl }).call('post /api/user/register', { body: { username: 'client_ann', password: 'pa55word!' } });
    const client = await loggedInClient('client_ann', 'pa55word!');
    expect(await client.call('get /api/user/self')).toMatchObject({ username: 'client_ann', role: ROLE.user });

    const created = await client.call('post /api/token', { body: { name: 'ci', unlimited_quota: true } });
    expect(created.key).toMatch(/^sk-/);
    const page = await client.call('get /api/token', { query: { page_size: '5' } });
    expect({ total: page.total, page_size: page.page_size, names: page.items.map((token) => token.name) }).toEqual({ total: 1, page_size: 5, names: ['ci'] });
    expect(await client.call('get /api/token/:id', { params: { id: String(created.id) } })).toMatchObject({ id: created.id, name: 'ci' });
  });

  it('authenticates with an access token instead of a session', async () => {
    const user = await createUser(account.prisma);
    const accessToken = await (await loggedInClient(user.username)).call('get /api/user/token');
    const client = new ApiClient({ baseUrl, userId: user.id, accessToken });
    expect(await client.call('get /api/user/self')).toMatchObject({ id: user.id, username: user.username });
  });

  it('runs an admin operation', async () => {
    const admin = await createUser(account.prisma, { role: ROLE.admin });
    const client = await loggedInClient(admin.username);
    const created = await client.call('post /api/user', { body: { username: 'made_by_admin', password: 'pa55word!', quota: 500 } });
    expect(created).toMatchObject({ username: 'made_by_admin', role: ROLE.user, quota: 500 });
    const users = await client.call('get /api/user', { query: {} });
    // An admin lists only lower roles: not itself.
    expect(users.items.map((user) => user.username)).toEqual(['made_by_admin']);
  });

  it('maps failures to ApiError with the service\'s status and code', async () => {
    const user = await createUser(account.prisma);
    const client = await loggedInClient(user.username);
    await expect(client.call('get /api/token/:id', { params: { id: '999' } })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    const invalid = client.call('post /api/token', { body: { name: '' } });
    await expect(invalid).rejects.toBeInstanceOf(ApiError);
    await expect(invalid).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    await expect(client.call('get /api/user', { query: {} })).rejects.toMatchObject({ status: 403 });
    await expect(new ApiClient({ baseUrl }).call('get /api/user/self')).rejects.toMatchObject({ status: 401 });
  });

  it('returns the CSV export as text', async () => {
    const user = await createUser(account.prisma);
    const csv = await (await loggedInClient(user.username)).call('get /api/log/self/export');
    expect(csv.split('\r\n')[0]).toMatch(/^id,/);
  });

  it('reads the price list: token prices, server tools and per-unit prices', async () => {
    const user = await createUser(account.prisma);
    const pricing = await (await loggedInClient(user.username)).call('get /api/pricing');
    const unitPrice: { model_name: string; usd_per_unit: number; unit?: 'image' | '1k_characters' | 'minute' | 'request' } | undefined =
      pricing.unit_prices.find((price) => price.model_name === 'whisper-1');
    expect(unitPrice).toEqual({ model_name: 'whisper-1', usd_per_unit: 0.006, unit: 'minute' });
    expect(pricing.items.find((item) => item.model_name === 'gpt-4o-mini')?.input_usd_per_1m).toBe(0.15);
    expect(pricing.tools.length).toBeGreaterThan(0);
  });
});
