import type { PrismaClient } from '@modelgate/db';
import { createApiKey, createChannel, createUser } from '@modelgate/testing';

export interface Seeded {
  userId: number;
  tokenId: number;
  key: string;
}

/** Far more than any run can spend, far below 2^53. */
const STARTING_QUOTA = 1_000_000_000_000;

/**
 * A funded user, a LIMITED key with a large remaining quota (so both balances are reserved and
 * charged on every call, as for most real keys) and one OpenAI-compatible channel on the fake upstream.
 */
export async function seedAccount(
  prisma: PrismaClient,
  options: { upstreamUrl: string; cryptoSecret: string; model: string },
): Promise<Seeded> {
  const user = await createUser(prisma, { username: 'bench', quota: STARTING_QUOTA });
  const { token, key } = await createApiKey(prisma, user.id, {
    name: 'bench key',
    remainQuota: STARTING_QUOTA,
    unlimitedQuota: false,
  });
  await createChannel(prisma, {
    name: 'fake upstream',
    baseUrl: options.upstreamUrl,
    models: options.model,
    cryptoSecret: options.cryptoSecret,
    autoBan: false,
  });
  return { userId: user.id, tokenId: token.id, key };
}
