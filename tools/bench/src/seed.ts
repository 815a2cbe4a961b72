import type { PrismaClient } from '@modelgate/db';
import { createApiKey, createChannel, createUser } from '@modelgate/testing';
import { CHAT_CHANNEL_FACTS } from './requests';

export interface Seeded {
  userId: number;
  tokenId: number;
  key: string;
}

/** Far more than any run can spend, far below 2^53. */
const STARTING_QUOTA = 1_000_000_000_000;

/**
 * A funded user, a LIMITED key with a large remaining quota (so both balances are reserved and
 * charged on every call, as for most real keys) and two channels on the fake upstream: an
 * OpenAI-compatible one (type 1: the completions model and the OpenAI chat model, passed through)
 * and an Anthropic one (type 14: its chat model, translated). Their models are priced by the
 * default ModelRatio / CompletionRatio options.
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
  const { openai, anthropic } = CHAT_CHANNEL_FACTS;
  await createChannel(prisma, {
    name: 'fake upstream (OpenAI)',
    type: openai.type,
    baseUrl: options.upstreamUrl,
    models: [...new Set([options.model, openai.model])].join(','),
    cryptoSecret: options.cryptoSecret,
    autoBan: false,
  });
  await createChannel(prisma, {
    name: 'fake upstream (Anthropic)',
    type: anthropic.type,
    baseUrl: options.upstreamUrl,
    models: anthropic.model,
    cryptoSecret: options.cryptoSecret,
    autoBan: false,
  });
  return { userId: user.id, tokenId: token.id, key };
}
