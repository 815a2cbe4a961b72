// docs/api.md 2.5 and 3.2: a charge beyond the balance (booked by the relay in full) leaves a debt,
// shown as such; credits still apply to a user in debt, each with its ledger row.
import { chargeConsumeBatch, ledgerMismatches } from '@modelgate/db';
import { createChannel } from '@modelgate/testing';
import { createTestAccount } from './support/app';
import { expectOk } from './support/envelope';
import { loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { prisma } = account;
const UNIT = 500_000;

beforeEach(() => account.reset());
afterAll(() => account.close());

/** A charge of `charged` booked as the relay's ledger writer books it: in full, whatever the balance. */
async function chargeAsTheRelay(userId: number, charged: number): Promise<void> {
  const channel = await createChannel(prisma, { type: 1, models: 'gpt-test' });
  const token = await prisma.token.create({ data: { userId, name: 'k', keyHash: `hash-${userId}-${charged}`, keyPrefix: 'abcd', keySuffix: 'wxyz', unlimitedQuota: true } });
  await prisma.$transaction(async (tx) => {
    await chargeConsumeBatch(tx, [{
      user_id: userId,
      created_at: new Date().toISOString().replace('Z', ''),
      username: 'debtor',
      token_id: token.id,
      token_name: 'k',
      model_name: 'gpt-test',
      charged,
      prompt_tokens: charged,
      completion_tokens: 0,
      use_time_ms: 1,
      first_byte_ms: null,
      is_stream: false,
      channel_id: channel.id,
      request_id: `req-${userId}`,
      other: {},
    }], new Map());
  });
}

describe('a user in debt', () => {
  it('sees the negative quota unchanged in GET /api/user/self', async () => {
    const { agent, id } = await loggedInUser(account, { quota: 100 });
    await chargeAsTheRelay(id, 350);

    expect(expectOk(await agent.get('/api/user/self'))).toMatchObject({ quota: -250, used_quota: 350, request_count: 1 });
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('may move affiliate quota smaller than the debt to the balance: the debt shrinks, one ledger row', async () => {
    const { agent, id } = await loggedInUser(account, { quota: 100, affQuota: UNIT });
    await chargeAsTheRelay(id, UNIT + 100 + 7);

    expect(expectOk(await agent.post('/api/user/aff_transfer').send({ quota: UNIT }))).toEqual({ quota: -7, aff_quota: 0 });
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });

  it('has its quota set by an admin from the debt, with the delta as one manage row', async () => {
    const admin = await loggedInUser(account, { role: ROLE.root });
    const debtor = await loggedInUser(account, { quota: 10 });
    await chargeAsTheRelay(debtor.id, 60);

    expect(expectOk(await admin.agent.put('/api/user/').send({ id: debtor.id, quota: 1_000 }))).toMatchObject({ quota: 1_000 });
    const [manage] = await prisma.log.findMany({ where: { userId: debtor.id, type: 3 } });
    expect(manage?.quota).toBe(1_050n);
    expect(await ledgerMismatches(prisma)).toEqual([]);
  });
});
