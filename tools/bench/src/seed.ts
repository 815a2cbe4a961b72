import type { PrismaClient } from '@modelgate/db';
import { createApiKey, createChannel, createUser } from '@modelgate/testing';
import { CHANNEL_FACTS, CHANNELS } from './requests';

export interface Seeded {
  userId: number;
  tokenId: number;
  key: string;
}

/** Far more than any run can spend, far below 2^53. */
const STARTING_QUOTA = 1_000_000_000_000;

/**
 * A funded user, a LIMITED key with a large remaining quota (so both balances are reserved and
 * charged on every call, as for most real keys) and three channels on the fake upstream: an
 * OpenAI-compatible one (type 1: the completions model and the OpenAI chat model), an Anthropic one
 * (type 14) and a Gemini one (type 24), each with its model. Their models are priced by the default
 * ModelRatio / CompletionRatio options.
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
  for (const channel of CHANNELS) {
    const { type, model } = CHANNEL_FACTS[channel];
    await createChannel(prisma, {
      name: `fake upstream (${channel})`,
      type,
      baseUrl: options.upstreamUrl,
      models: channel === 'openai' ? [...new Set([options.model, model])].join(',') : model,
      cryptoSecret: options.cryptoSecret,
      autoBan: false,
    });
  }
  return { userId: user.id, tokenId: token.id, key };
}
