// docs/api.md 3.7: a key's own group is honoured only while its owner may still choose it (admins).
// Checked at call time: once the owner is moved to another group or demoted, and the account
// service has announced the change, calls with the key are refused before any upstream call.
import { CACHE_INVALIDATION_CHANNEL, ROLE } from '@modelgate/schemas';
import { createApiKey, createUser, redisPrefix, setOption } from '@modelgate/testing';
import { consumeLogs, eventually, expectLedgerInvariant, harness, MODEL, openAiChannel, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma);
  await setOption(harness.prisma, 'GroupRatio', { default: 1, vip: 2 });
  await openAiChannel(harness.prisma, upstream.url, { groups: 'default,vip' });
  await harness.reloadCaches();
});

const REQUEST = { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5 };

interface Answer {
  status: number;
  error: Record<string, unknown> | undefined;
}

async function post(path: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const response = await fetch(`${harness.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const parsed = (await response.json()) as { error?: Record<string, unknown> };
  return { status: response.status, error: parsed.error };
}

const complete = (key: string) => post('/v1/completions', { authorization: `Bearer ${key}` }, REQUEST);

/** A user with funds and a key of its own in `vip`. */
async function ownerWithVipKey(user: { group: string; role: number }) {
  const owner = await createUser(harness.prisma, { quota: 1_000_000, ...user });
  const { key } = await createApiKey(harness.prisma, owner.id, { unlimitedQuota: true, group: 'vip' });
  return { owner, key };
}

/** What the account service does after editing a user: the change, then the message every relay reads. */
async function changeUser(userId: number, data: { group?: string; role?: number }): Promise<void> {
  await harness.prisma.user.update({ where: { id: userId }, data });
  await harness.redis.publish(`${redisPrefix()}${CACHE_INVALIDATION_CHANNEL}`, JSON.stringify({ kind: 'user', userId }));
}

function expectGroupRefused(answer: Answer): void {
  expect(answer.status).toBe(403);
  expect(answer.error).toMatchObject({ type: 'permission_error', code: 'group_not_allowed', param: null });
  expect(answer.error?.message).toMatch(/group "vip" is not available to its owner, whose group is "default"/);
}

/** Polls until the relay has applied the change (every relay does within 2 s), then checks the refusal. */
async function refusedWithin2s(key: string): Promise<void> {
  const answer = await eventually(async () => {
    const polled = await complete(key);
    expect(polled.status).toBe(403);
    return polled;
  }, 2_000);
  expectGroupRefused(answer);
}

describe('a key in a group other than its owner', () => {
  it('is served at the group price while the owner is in it; refused within 2 s of the owner moving to default, before any upstream call', async () => {
    const { owner, key } = await ownerWithVipKey({ group: 'vip', role: ROLE.user });
    expect((await complete(key)).status).toBe(200);

    await changeUser(owner.id, { group: 'default' });
    await refusedWithin2s(key);
    // Calls made before the message arrived were served; none reaches the upstream now.
    const served = upstream.requests.length;
    expectGroupRefused(await complete(key));
    expect(upstream.requests).toHaveLength(served);

    await harness.relay.ledger.flush();
    const rows = await consumeLogs(harness.prisma);
    expect(rows).toHaveLength(served);
    for (const row of rows) expect([row.quota, (row.other as { group: string }).group]).toEqual([-20n, 'vip']);
    await expectLedgerInvariant(harness.prisma);
  });

  it("is refused in the Gemini and Anthropic dialects as their permission errors", async () => {
    const { owner, key } = await ownerWithVipKey({ group: 'vip', role: ROLE.user });
    await changeUser(owner.id, { group: 'default' });
    await refusedWithin2s(key);
    upstream.requests.length = 0;

    const google = await post('/v1beta/models/gemini-2.5-flash:generateContent', { 'x-goog-api-key': key }, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(google).toMatchObject({ status: 403, error: { code: 403, status: 'PERMISSION_DENIED', message: expect.stringContaining('group "vip"') } });
    const anthropic = await post('/v1/messages', { 'x-api-key': key, 'anthropic-version': '2023-06-01' }, { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(anthropic).toMatchObject({ status: 403, error: { type: 'permission_error', message: expect.stringContaining('group "vip"') } });
    expect(upstream.requests).toHaveLength(0);
  });

  it("an admin's key keeps its group; once the admin is demoted it is refused, and served again after a promotion", async () => {
    const { owner, key } = await ownerWithVipKey({ group: 'default', role: ROLE.admin });
    expect((await complete(key)).status).toBe(200);

    await changeUser(owner.id, { role: ROLE.user });
    await refusedWithin2s(key);
    const served = upstream.requests.length;
    expectGroupRefused(await complete(key));
    expect(upstream.requests).toHaveLength(served);

    await changeUser(owner.id, { role: ROLE.admin });
    await eventually(async () => expect((await complete(key)).status).toBe(200), 2_000);
  });

  it("a key without a group of its own follows its owner's group", async () => {
    const owner = await createUser(harness.prisma, { quota: 1_000_000, group: 'vip' });
    const { key } = await createApiKey(harness.prisma, owner.id, { unlimitedQuota: true });
    expect((await complete(key)).status).toBe(200);
    await changeUser(owner.id, { group: 'default' });
    await eventually(async () => {
      expect((await complete(key)).status).toBe(200);
      await harness.relay.ledger.flush();
      expect((await consumeLogs(harness.prisma)).map((row) => (row.other as { group: string }).group).at(-1)).toBe('default');
    }, 2_000);
  });
});
