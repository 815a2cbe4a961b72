// docs/api.md 2.5: reservations that never overdraw, settlement through the batched ledger (every
// charge in full: usage beyond the reservation is a debt, refused further calls until topped up),
// and a Redis mirror that follows the account service's balance changes.
import { CACHE_INVALIDATION_CHANNEL } from '@modelgate/schemas';
import { createApiKey, redisPrefix, setOption } from '@modelgate/testing';
import type { LedgerEntry } from '../src/features/billing/ledger-entry';
import { LedgerRepository } from '../src/features/billing/repository';
import { CHAT_CHANNELS, OPENAI, withChatChannels } from './chat-support';
import { consumeLogs, createCustomer, type Customer, eventually, expectLedgerInvariant, harness, ledgerEntry, MODEL, openAiClient, relaySuite, resetSuite, startRelay, upstream, withOpenAiChannel } from './harness';

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withOpenAiChannel();
});

/** Each request costs exactly its reservation: 5 prompt + 5 completion tokens = 10 quota. */
const TEN_QUOTA_REQUEST = { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5 };

async function postCompletion(customer: Customer, body: unknown): Promise<number> {
  const response = await fetch(`${harness.url}/v1/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('billing', () => {
  it('lets exactly 100 of 200 concurrent requests through on a key funded for 100, never below 0', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 100_000, remainQuota: 1_000 });
    const statuses = await Promise.all(Array.from({ length: 200 }, () => postCompletion(customer, TEN_QUOTA_REQUEST)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s !== 200).every((s) => s === 401 || s === 403)).toBe(true);
    expect(upstream.requests).toHaveLength(100);

    await harness.relay.ledger.flush();
    const token = await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
    expect(token.remainQuota).toBe(0n);
    expect(token.usedQuota).toBe(1_000n);
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
    expect(user.quota).toBe(99_000n);
    expect(await consumeLogs(harness.prisma)).toHaveLength(100);
    await expectLedgerInvariant(harness.prisma);
  });

  it('holds the user balance the same way across several keys', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 250 });
    const { key: secondKey } = await createApiKey(harness.prisma, customer.userId, { unlimitedQuota: true });
    const other: Customer = { ...customer, key: secondKey };
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => postCompletion(i % 2 ? customer : other, TEN_QUOTA_REQUEST)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(25);
    await harness.relay.ledger.flush();
    expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(0n);
    await expectLedgerInvariant(harness.prisma);
  });

  it('keeps the ledger invariant after a burst of mixed traffic', async () => {
    const customers = await Promise.all([
      createCustomer(harness.prisma, { quota: 5_000 }),
      createCustomer(harness.prisma, { quota: 3_000, remainQuota: 400 }),
      createCustomer(harness.prisma, { quota: 80 }),
    ]);
    const client = (c: Customer) => openAiClient(harness, c.key);
    const calls: Promise<unknown>[] = [];
    // 90 calls, the customers in turn.
    for (let round = 0; round < 30; round++) {
      for (const [k, customer] of customers.entries()) {
        const i = round * customers.length + k;
        const mode = i % 10 === 0 ? 'error500' : i % 7 === 0 ? 'noUsage' : 'ok';
        const stream = i % 2 === 0;
        calls.push(
          client(customer)
            .completions.create({ model: MODEL, prompt: [1, 2, 3], max_tokens: 4, stream, fake_mode: mode } as never)
            .then(async (result) => {
              if (stream) for await (const _chunk of result as unknown as AsyncIterable<unknown>) { /* drain */ }
            })
            .catch(() => undefined),
        );
      }
    }
    await Promise.all(calls);
    await harness.relay.ledger.flush();
    const logs = await consumeLogs(harness.prisma);
    expect(logs.length).toBeGreaterThan(30);
    // Every charge in full, whatever the balance left (usage may exceed the reservation: a debt).
    for (const log of logs) expect(log.quota).toBe(BigInt(-(log.promptTokens + log.completionTokens)));
    await expectLedgerInvariant(harness.prisma);
    const channel = await harness.prisma.channel.findFirstOrThrow();
    expect(channel.usedQuota).toBe(-logs.reduce((sum, l) => sum + l.quota, 0n));
  });

  describe('usage beyond the reservation (charges are never cut to fit)', () => {
    /**
     * A chat call reserving its small prompt + max_tokens 5, while the upstream reports 200 more
     * prompt tokens read from context it holds (as with previous_response_id): charged far more.
     */
    const CHAT_REQUEST = { model: CHAT_CHANNELS[OPENAI].model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 5 };
    const HELD_CONTEXT_TOKENS = 200;

    beforeEach(async () => {
      // The held context at the full input price, so a charge is its prompt + completion tokens.
      await setOption(harness.prisma, 'CacheRatio', { [CHAT_REQUEST.model]: 1 });
      await withChatChannels([OPENAI]);
      upstream.setMode('ok', { chunks: 5, chunkDelayMs: 0, cachedTokens: HELD_CONTEXT_TOKENS });
    });

    async function postChat(customer: Customer): Promise<{ status: number; body: { error?: Record<string, unknown> } }> {
      const response = await fetch(`${harness.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(CHAT_REQUEST),
      });
      return { status: response.status, body: (await response.json()) as { error?: Record<string, unknown> } };
    }

    it('30 concurrent calls from a user funded for 100: each charged in full, the balance a debt, quota = sum of rows, the next call refused before the upstream', async () => {
      const customer = await createCustomer(harness.prisma, { quota: 100 });

      const answers = await Promise.all(Array.from({ length: 30 }, () => postChat(customer)));
      const served = answers.filter((a) => a.status === 200).length;
      // About 100 / the reservation pass together (their holds fill the balance), then the debt refuses the rest.
      expect(served).toBeGreaterThanOrEqual(3);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 403)).toBe(true);
      expect(upstream.requests).toHaveLength(served);

      await harness.relay.ledger.flush();
      const logs = await consumeLogs(harness.prisma);
      expect(logs).toHaveLength(served);
      for (const log of logs) {
        expect(log.promptTokens).toBeGreaterThan(HELD_CONTEXT_TOKENS);
        expect(log.quota).toBe(BigInt(-(log.promptTokens + log.completionTokens)));
      }
      const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
      expect(user.quota).toBe(100n + logs.reduce((sum, l) => sum + l.quota, 0n));
      expect(user.quota).toBeLessThan(0n);
      await expectLedgerInvariant(harness.prisma);

      const refused = await postChat(customer);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_user_quota', message: expect.stringContaining('top up to continue') });
      expect(upstream.requests).toHaveLength(served);
    });

    it('a limited key goes below 0 by the excess and is then refused as exhausted; the user is charged in full too', async () => {
      const customer = await createCustomer(harness.prisma, { quota: 1_000, remainQuota: 50 });

      expect((await postChat(customer)).status).toBe(200);
      await harness.relay.ledger.flush();
      const [log] = await consumeLogs(harness.prisma);
      const charge = -(log?.quota ?? 0n);
      expect(charge).toBeGreaterThan(50n);
      const token = await harness.prisma.token.findUniqueOrThrow({ where: { id: customer.tokenId } });
      expect([token.remainQuota, token.usedQuota]).toEqual([50n - charge, charge]);
      expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(1_000n - charge);
      await expectLedgerInvariant(harness.prisma);

      expect((await postChat(customer)).status).toBe(401);
      expect(upstream.requests).toHaveLength(1);
    });

    it('a user in debt is refused until a top-up brings the balance above 0', async () => {
      const customer = await createCustomer(harness.prisma, { quota: 20 });
      expect((await postChat(customer)).status).toBe(200);
      await harness.relay.ledger.flush();
      const debt = (await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota;
      expect(debt).toBeLessThan(0n);
      expect((await postChat(customer)).status).toBe(403);
      expect(upstream.requests).toHaveLength(1);

      // A top-up that leaves a debt (booked as the worker does): still refused. One more: served.
      for (const [amount, status] of [[-debt, 403], [1_000n, 200]] as const) {
        await harness.prisma.$transaction([
          harness.prisma.user.update({ where: { id: customer.userId }, data: { quota: { increment: amount } } }),
          harness.prisma.log.create({ data: { userId: customer.userId, type: 1, quota: amount, content: 'top-up' } }),
        ]);
        await harness.relay.cacheSync.apply({ kind: 'user', userId: customer.userId });
        expect((await postChat(customer)).status).toBe(status);
      }
      expect(upstream.requests).toHaveLength(2);
      await harness.relay.ledger.flush();
      await expectLedgerInvariant(harness.prisma);
    });
  });

  it('follows account-service balance changes announced on the invalidation channel', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 15 });
    const client = openAiClient(harness, customer.key);
    await client.completions.create(TEN_QUOTA_REQUEST);
    await expect(client.completions.create(TEN_QUOTA_REQUEST)).rejects.toMatchObject({ status: 403 });

    // A top-up, as the worker books it: balance and ledger row in one transaction, then the message.
    await harness.prisma.$transaction([
      harness.prisma.user.update({ where: { id: customer.userId }, data: { quota: { increment: 100 } } }),
      harness.prisma.log.create({ data: { userId: customer.userId, type: 1, quota: 100n, content: 'top-up' } }),
    ]);
    await harness.redis.publish(
      `${redisPrefix()}${CACHE_INVALIDATION_CHANNEL}`,
      JSON.stringify({ kind: 'user', userId: customer.userId }),
    );
    await eventually(() => client.completions.create(TEN_QUOTA_REQUEST), 2_000);
    await harness.relay.ledger.flush();
    expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(95n);
    await expectLedgerInvariant(harness.prisma);
  });

  it('books every charge in full when an admin lowers a balance below charges not yet written: a debt', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 1_000 });
    await harness.relay.ledger.stop();
    try {
      const client = openAiClient(harness, customer.key);
      for (let i = 0; i < 3; i++) await client.completions.create(TEN_QUOTA_REQUEST);
      // Admin edit with its manage row, while 30 quota of charges wait in the queue.
      await harness.prisma.$transaction([
        harness.prisma.user.update({ where: { id: customer.userId }, data: { quota: 25 } }),
        harness.prisma.log.create({ data: { userId: customer.userId, type: 3, quota: -975n, content: 'admin edit' } }),
      ]);
    } finally {
      await harness.relay.ledger.start();
    }
    await harness.relay.ledger.flush();
    const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } });
    expect(user.quota).toBe(-5n);
    const logs = await consumeLogs(harness.prisma);
    expect(logs.map((l) => l.quota)).toEqual([-10n, -10n, -10n]);
    await expectLedgerInvariant(harness.prisma);

    await harness.relay.cacheSync.apply({ kind: 'user', userId: customer.userId });
    await expect(openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST)).rejects.toMatchObject({ status: 403 });
  });

  it('writes every queued charge when the relay shuts down', async () => {
    const customer = await createCustomer(harness.prisma);
    // Only the second relay's shutdown may write these charges: the first one's writer is paused.
    await harness.relay.ledger.stop();
    const second = await startRelay({ LEDGER_FLUSH_INTERVAL_MS: '3600000' });
    try {
      await second.reloadCaches();
      const client = openAiClient(second, customer.key);
      for (let i = 0; i < 3; i++) await client.completions.create(TEN_QUOTA_REQUEST);
      expect(await consumeLogs(harness.prisma)).toHaveLength(0);
    } finally {
      await second.close();
      await harness.relay.ledger.start();
    }
    expect(await consumeLogs(harness.prisma)).toHaveLength(3);
    await expectLedgerInvariant(harness.prisma);
  });

  describe('a batch left behind by a writer that died', () => {
    const prefix = () => redisPrefix();

    async function leaveBatch(customer: Customer, written: boolean): Promise<LedgerEntry> {
      const entry = ledgerEntry(customer, (await harness.prisma.channel.findFirstOrThrow()).id);
      // The mirror as the settle step leaves it: charge pending.
      await harness.redis.hincrby(`${prefix()}bal:u:${customer.userId}`, 'pending', 40);
      if (written) {
        await new LedgerRepository(harness.prisma, `${prefix()}ledger`).writeBatch([entry]);
      }
      await harness.redis.rpush(`${prefix()}ledger:processing`, JSON.stringify(entry));
      await harness.redis.set(`${prefix()}ledger:batch`, 'dead-batch');
      return entry;
    }

    it.each([true, false])('is written exactly once (already committed: %s)', async (committed) => {
      const customer = await createCustomer(harness.prisma, { quota: 1_000 });
      await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
      await harness.relay.ledger.flush();
      await harness.relay.ledger.stop();
      try {
        await leaveBatch(customer, committed);
      } finally {
        await harness.relay.ledger.start();
      }
      await harness.relay.ledger.flush();
      const logs = await consumeLogs(harness.prisma);
      expect(logs.map((l) => l.quota)).toEqual([-10n, -40n]);
      expect((await harness.prisma.user.findUniqueOrThrow({ where: { id: customer.userId } })).quota).toBe(950n);
      await expectLedgerInvariant(harness.prisma);

      // The mirror agrees with the database: 950 available, so a 950 reservation passes and 951 would not.
      const mirror = await harness.redis.hgetall(`${prefix()}bal:u:${customer.userId}`);
      expect(Number(mirror.db) - Number(mirror.pending)).toBe(950);
    });
  });

  it('drops the holds of a relay instance that vanished mid-request', async () => {
    const customer = await createCustomer(harness.prisma, { quota: 100 });
    await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
    await harness.redis.hset(`${redisPrefix()}bal:u:${customer.userId}`, 'h:crashed-instance', 90);
    await expect(openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST)).rejects.toMatchObject({ status: 403 });
    await harness.relay.cacheSync.refreshAll();
    await openAiClient(harness, customer.key).completions.create(TEN_QUOTA_REQUEST);
  });
});
