// Bad input must be a 4xx, never a 500: one table over every /api route that takes text,
// a page or an id. Each bad value gets 400 `invalid_request` naming the field (404 for path ids, which
// name nothing) and writes nothing.
import { createApiKey, createChannel, createUser } from '@modelgate/testing';
import request, { type Response } from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { type Agent, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

type Caller = 'anonymous' | 'root';
type Method = 'get' | 'post' | 'put' | 'delete';

interface Call {
  as: Caller;
  method: Method;
  path: string;
  body?: unknown;
}

let root: Agent;
let tokenId: number;
let channelId: number;
let userId: number;

beforeAll(async () => {
  await account.reset();
  const rootUser = await loggedInUser(account, { role: ROLE.root });
  root = rootUser.agent;
  tokenId = (await createApiKey(prisma, rootUser.id)).token.id;
  // A closed port: a channel test that got through validation would fail fast, offline.
  channelId = (await createChannel(prisma, { baseUrl: 'http://127.0.0.1:1' })).id;
  userId = (await createUser(prisma)).id;
});
afterAll(() => account.close());

function send(call: Call): Promise<Response> {
  const agent = call.as === 'root' ? root : request(app);
  const pending = agent[call.method](call.path);
  return call.body === undefined ? pending : pending.send(call.body as object);
}

/** Every row of every table the account service writes, to prove a refused call wrote nothing. */
async function snapshot(): Promise<unknown[]> {
  const byId = { orderBy: { id: 'asc' } } as const;
  return Promise.all([
    prisma.user.findMany(byId),
    prisma.token.findMany(byId),
    prisma.channel.findMany(byId),
    prisma.log.findMany(byId),
    prisma.topUp.findMany(byId),
    prisma.paymentEvent.findMany(byId),
    prisma.twoFactor.findMany(),
    prisma.backupCode.findMany(byId),
    prisma.option.findMany({ orderBy: { key: 'asc' } }),
  ]);
}

/**
 * Sends each call and lists those not refused with 400 `invalid_request` naming `field` (the message
 * starts with it), or that changed a table: all of them at once, so one run shows every gap.
 */
async function unrefused(calls: [Call, string][]): Promise<string[]> {
  const failures: string[] = [];
  for (const [call, field] of calls) {
    const label = `${call.method.toUpperCase()} ${call.path} ${JSON.stringify(call.body ?? '')}`;
    const before = await snapshot();
    const res = await send(call);
    const message = String(res.body.message);
    const named = message.startsWith(`${field}:`) || message.startsWith(`${field}.`);
    if (res.status !== 400 || res.body.code !== 'invalid_request' || !named) failures.push(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
    else if (JSON.stringify(await snapshot(), jsonSafe) !== JSON.stringify(before, jsonSafe)) failures.push(`${label}: wrote to the database`);
  }
  return failures;
}

const jsonSafe = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

const NUL = 'a\u0000b';
const valid = {
  register: { username: 'new_user', password: 'long-enough-password', email: 'new@example.com', aff_code: 'ABCD1234' },
  login: { username: 'someone', password: 'long-enough-password' },
  self: { display_name: 'Me', email: 'me@example.com', password: 'another-password-1', original_password: 'correct-horse-battery' },
  token: { name: 'key', model_limits: 'gpt-4o', allow_ips: '10.0.0.1', group: 'default' },
  channel: { name: 'c', key: 'sk-upstream', base_url: 'https://example.com', models: 'gpt-4o', groups: 'default', model_mapping: '' },
  adminUser: { display_name: 'U', group: 'default', remark: 'r' },
} satisfies Record<string, Record<string, string>>;

/** One call per text field of `text`, each carrying a NUL in that field only; `rest` holds the other fields. */
function nulInEachField(as: Caller, method: Method, path: string, text: Record<string, string>, rest: Record<string, unknown> = {}): [Call, string][] {
  return Object.keys(text).map((field) => [{ as, method, path, body: { ...rest, ...text, [field]: NUL } }, field]);
}

const nulCalls = (): [Call, string][] => [
  ...nulInEachField('anonymous', 'post', '/api/user/register', valid.register),
  ...nulInEachField('anonymous', 'post', '/api/user/login', valid.login),
  ...nulInEachField('anonymous', 'post', '/api/user/login/2fa', { code: '123456' }),
  ...nulInEachField('root', 'put', '/api/user/self', valid.self),
  ...nulInEachField('root', 'post', '/api/user/2fa/enable', { code: '123456' }),
  ...nulInEachField('root', 'post', '/api/user/2fa/disable', { code: '123456' }),
  ...nulInEachField('root', 'post', '/api/user/2fa/backup_codes', { code: '123456' }),
  ...nulInEachField('root', 'post', '/api/token/', valid.token),
  ...nulInEachField('root', 'put', '/api/token/', valid.token, { id: tokenId }),
  ...nulInEachField('root', 'post', '/api/user/stripe/pay', { payment_method: 'stripe' }, { amount: 1 }),
  ...nulInEachField('root', 'post', '/api/channel/', valid.channel, { type: 1 }),
  ...nulInEachField('root', 'put', '/api/channel/', valid.channel, { id: channelId }),
  ...nulInEachField('root', 'put', '/api/user/', valid.adminUser, { id: userId }),
  ...nulInEachField('root', 'post', '/api/user/manage', { action: 'disable' }, { id: userId }),
  ...nulInEachField('root', 'put', '/api/option/', { key: 'StripePriceId', value: 'price_1' }),
  [{ as: 'root', method: 'post', path: '/api/channel/', body: { ...valid.channel, type: 1, model_mapping: { [NUL]: 'gpt-4o' } } }, 'model_mapping'],
  [{ as: 'root', method: 'put', path: '/api/channel/', body: { id: channelId, model_mapping: { 'gpt-4o': NUL } } }, 'model_mapping'],
  [{ as: 'root', method: 'put', path: '/api/option/', body: { key: 'ModelRatio', value: { [NUL]: 1 } } }, 'value'],
  [{ as: 'root', method: 'get', path: '/api/log/self?model_name=a%00b' }, 'model_name'],
  [{ as: 'root', method: 'get', path: '/api/log/?model_name=a%00b' }, 'model_name'],
  [{ as: 'root', method: 'get', path: '/api/log/?username=a%00b' }, 'username'],
  [{ as: 'root', method: 'get', path: '/api/payment/events?status=a%00b' }, 'status'],
  [{ as: 'root', method: 'get', path: `/api/channel/test/${channelId}?model=a%00b` }, 'model'],
];

describe('NUL characters', () => {
  // The calls are built inside the test: the fixtures' ids exist only once beforeAll has run.
  it('are refused in every text field of every route, naming the field, and nothing is written', async () => {
    expect(await unrefused(nulCalls())).toEqual([]);
  });

  it.each(['/api/token/a%00', '/api/channel/1%00', '/api/user/%001'])('in a path id names nothing: GET %s is a 404', async (path) => {
    expectFailure(await root.get(path), 404, 'not_found');
  });
});

const PAGED_LISTS = ['/api/token/', '/api/channel/', '/api/user/', '/api/log/self', '/api/log/', '/api/user/topup/self', '/api/payment/events'];

const BAD_PAGES: [string, string][] = [
  ['p=10000000000000000000000000000', 'p'],
  ['p=1000001', 'p'],
  ['p=0', 'p'],
  ['p=-1', 'p'],
  ['p=1.5', 'p'],
  ['p=1e3', 'p'],
  ['p=abc', 'p'],
  ['p=a%00b', 'p'],
  ['p=1&p=2', 'p'],
  ['page_size=0', 'page_size'],
  ['page_size=101', 'page_size'],
  ['page_size=1000', 'page_size'],
  ['page_size=-5', 'page_size'],
  ['page_size=ten', 'page_size'],
  ['page_size=99999999999999999999', 'page_size'],
];

describe('paging bounds (docs/api.md 1.1: p from 1, page_size 1..100)', () => {
  it.each(PAGED_LISTS)('GET %s refuses every out-of-range or malformed p and page_size', async (path) => {
    const calls = BAD_PAGES.map(([query, field]): [Call, string] => [{ as: 'root', method: 'get', path: `${path}?${query}` }, field]);
    expect(await unrefused(calls)).toEqual([]);
  });

  it.each(PAGED_LISTS)('GET %s serves the largest page and empty parameters as the defaults', async (path) => {
    expect(expectOk(await root.get(`${path}?p=1000000&page_size=100`))).toMatchObject({ page: 1_000_000, page_size: 100, items: [] });
    expect(expectOk(await root.get(`${path}?p=&page_size=`))).toMatchObject({ page: 1, page_size: 10 });
  });
});

const BAD_PATH_IDS = ['2147483648', '99999999999999999999', '10000000000000000000000000000', '-1', '0', '1.5', '1e3', 'abc', '1%00'];

describe('ids and numbers', () => {
  it.each([
    ['get', '/api/token/'],
    ['delete', '/api/token/'],
    ['get', '/api/channel/'],
    ['get', '/api/channel/test/'],
    ['delete', '/api/channel/'],
    ['get', '/api/user/'],
  ] as const)('%s %s:id with an id that cannot exist is a 404', async (method, prefix) => {
    for (const id of BAD_PATH_IDS) {
      const before = await snapshot();
      expectFailure(await root[method](`${prefix}${id}`), 404, 'not_found');
      expect(await snapshot()).toEqual(before);
    }
  });

  it('a path that is not valid percent-encoding is a 400', async () => {
    expectFailure(await root.get('/api/token/%zz'), 400, 'invalid_request');
  });

  it('POST /api/payment/events/:id/replay with an id that cannot exist is a 404', async () => {
    for (const id of BAD_PATH_IDS) expectFailure(await root.post(`/api/payment/events/${id}/replay`), 404, 'not_found');
  });

  it('refuses body ids beyond PostgreSQL integers and out-of-range query numbers, naming the field', async () => {
    const calls: [Call, string][] = [
      [{ as: 'root', method: 'put', path: '/api/token/', body: { id: 2147483648, name: 'x' } }, 'id'],
      [{ as: 'root', method: 'put', path: '/api/token/', body: { id: 1e29, name: 'x' } }, 'id'],
      [{ as: 'root', method: 'put', path: '/api/channel/', body: { id: 2147483648, name: 'x' } }, 'id'],
      [{ as: 'root', method: 'post', path: '/api/channel/batch', body: { ids: [channelId, 2147483648] } }, 'ids.1'],
      [{ as: 'root', method: 'put', path: '/api/user/', body: { id: 2147483648, remark: 'x' } }, 'id'],
      [{ as: 'root', method: 'post', path: '/api/user/manage', body: { id: -1, action: 'disable' } }, 'id'],
      [{ as: 'root', method: 'put', path: '/api/token/', body: { id: tokenId, remain_quota: 2 ** 64 } }, 'remain_quota'],
      [{ as: 'root', method: 'put', path: '/api/user/', body: { id: userId, quota: 1e300 } }, 'quota'],
      [{ as: 'root', method: 'get', path: '/api/log/self?start_timestamp=99999999999999999999' }, 'start_timestamp'],
      [{ as: 'root', method: 'get', path: '/api/log/?end_timestamp=1e400' }, 'end_timestamp'],
      [{ as: 'root', method: 'get', path: '/api/log/?type=10000000000000000000000000000' }, 'type'],
    ];
    expect(await unrefused(calls)).toEqual([]);
  });
});

/** Object.prototype member names: as keys of a plain object they read an inherited function. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'];

/** A JSON object holding `name` as its own key (an object literal would set the prototype for `__proto__`). */
const objectWith = (name: string, value: unknown): unknown => JSON.parse(`{${JSON.stringify(name)}: ${JSON.stringify(value)}}`);

const prototypeNameCalls = (name: string): [Call, string][] => [
  [{ as: 'root', method: 'post', path: '/api/channel/', body: { ...valid.channel, type: 1, models: `gpt-4o,${name}` } }, 'models'],
  [{ as: 'root', method: 'post', path: '/api/channel/', body: { ...valid.channel, type: 1, groups: `default,${name}` } }, 'groups'],
  [{ as: 'root', method: 'post', path: '/api/channel/', body: { ...valid.channel, type: 1, model_mapping: objectWith(name, 'gpt-4o') } }, 'model_mapping'],
  [{ as: 'root', method: 'post', path: '/api/channel/', body: { ...valid.channel, type: 1, model_mapping: `{"gpt-4o": "${name}"}` } }, 'model_mapping'],
  [{ as: 'root', method: 'put', path: '/api/channel/', body: { id: channelId, models: name } }, 'models'],
  [{ as: 'root', method: 'put', path: '/api/channel/', body: { id: channelId, groups: name } }, 'groups'],
  [{ as: 'root', method: 'put', path: '/api/channel/', body: { id: channelId, model_mapping: `{"${name}": "gpt-4o"}` } }, 'model_mapping'],
  [{ as: 'root', method: 'post', path: '/api/token/', body: { name: 'k', group: name } }, 'group'],
  [{ as: 'root', method: 'post', path: '/api/token/', body: { name: 'k', model_limits_enabled: true, model_limits: `gpt-4o, ${name}` } }, 'model_limits'],
  [{ as: 'root', method: 'put', path: '/api/token/', body: { id: tokenId, model_limits: name } }, 'model_limits'],
  [{ as: 'root', method: 'put', path: '/api/user/', body: { id: userId, group: name } }, 'group'],
  [{ as: 'root', method: 'put', path: '/api/option/', body: { key: 'ModelRatio', value: objectWith(name, 1) } }, 'value'],
  [{ as: 'root', method: 'put', path: '/api/option/', body: { key: 'CompletionRatio', value: `{"${name}": 2}` } }, 'value'],
  [{ as: 'root', method: 'put', path: '/api/option/', body: { key: 'GroupRatio', value: `{"default": 1, "${name}": 0.5}` } }, 'value'],
];

describe('model and group names that are Object.prototype members', () => {
  it.each(PROTOTYPE_NAMES)('%j is refused as a model name, group name and ratio map key, naming the field', async (name) => {
    expect(await unrefused(prototypeNameCalls(name))).toEqual([]);
  });

  it('still accepts names that merely contain one (Constructor, my__proto__model)', async () => {
    expectOk(await root.post('/api/channel/').send({ ...valid.channel, type: 1, models: 'Constructor,my__proto__model', groups: 'default,toString2' }));
    expectOk(await root.put('/api/option/').send({ key: 'ModelRatio', value: { Constructor: 1, my__proto__model: 2 } }));
  });
});
