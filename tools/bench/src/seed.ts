import type { PrismaClient } from '@modelgate/db';
import { type ChannelOverrides, createApiKey, createChannel, createUser } from '@modelgate/testing';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '@modelgate/testing/fake-upstream';
import { type Channel, CHANNEL_FACTS, CHANNELS, MEDIA_MODELS } from './requests';

export interface Seeded {
  userId: number;
  tokenId: number;
  key: string;
  /** Of the same user: every limit and a budget, none of which the bench reaches (the chat-limited case). */
  limitedKey: string;
}

export interface SeedOptions {
  upstreamUrl: string;
  cryptoSecret: string;
  /** The completions model, served by the OpenAI channel beside its chat model. */
  model: string;
  /** The key file of the fake upstream's Vertex service account (its key pair is the fake process's own). */
  vertexServiceAccount: string;
}

/** Far more than any run can spend, far below 2^53. */
const STARTING_QUOTA = 1_000_000_000_000;

/** The largest limits a key may have (docs/api.md 3.9.3): counted on every call, never reached. */
const NEVER_REACHED = { rpmLimit: 1_000_000, tpmLimit: 2_000_000_000, maxConcurrency: 100_000, budgetUsd: 1_000_000_000 };

/** The credentials and settings the fake takes from a cloud channel; the other channels' keys are any. */
function cloudFields(channel: Channel, options: SeedOptions): ChannelOverrides {
  if (channel === 'bedrock') return { key: `${FAKE_AWS_ACCESS_KEY_ID}|${FAKE_AWS_SECRET_ACCESS_KEY}`, settings: { region: 'us-east-1' } };
  if (channel === 'vertex') return { key: options.vertexServiceAccount };
  return {};
}

/**
 * A funded user, a LIMITED key with a large remaining quota (so both balances are reserved and
 * charged on every call, as for most real keys), a second such key with every limit and a monthly
 * budget (checked, counted and held on every call, never reached) and five channels on the fake upstream: an
 * OpenAI-compatible one (type 1: the completions model, the OpenAI chat model and the media models),
 * an Anthropic one (type 14), a Gemini one (type 24), an AWS Bedrock one (type 33, signing with AWS
 * credentials) and a Google Vertex AI one (type 41, with a service account), each with its model.
 * Their models are priced by the default ModelRatio / CompletionRatio options, the media models per
 * unit by the default ModelPrice.
 */
export async function seedAccount(prisma: PrismaClient, options: SeedOptions): Promise<Seeded> {
  const user = await createUser(prisma, { username: 'bench', quota: STARTING_QUOTA });
  const { token, key } = await createApiKey(prisma, user.id, {
    name: 'bench key',
    remainQuota: STARTING_QUOTA,
    unlimitedQuota: false,
  });
  const limited = await createApiKey(prisma, user.id, {
    name: 'bench key with limits',
    remainQuota: STARTING_QUOTA,
    unlimitedQuota: false,
    ...NEVER_REACHED,
    budgetPeriod: 'month',
  });
  for (const channel of CHANNELS) {
    const { type, model, upstreamModel } = CHANNEL_FACTS[channel];
    await createChannel(prisma, {
      name: `fake upstream (${channel})`,
      type,
      baseUrl: options.upstreamUrl,
      models: channel === 'openai' ? [...new Set([options.model, model, ...Object.values(MEDIA_MODELS)])].join(',') : model,
      modelMapping: upstreamModel === undefined ? '' : JSON.stringify({ [model]: upstreamModel }),
      cryptoSecret: options.cryptoSecret,
      autoBan: false,
      ...cloudFields(channel, options),
    });
  }
  return { userId: user.id, tokenId: token.id, key, limitedKey: limited.key };
}
