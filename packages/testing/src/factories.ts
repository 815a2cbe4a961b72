// Rows for tests, written the way the services write them (hashed keys, encrypted channel keys,
// a ledger row for any starting balance), so the services under test accept them as their own.
import { randomBytes, randomInt } from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import {
  type ChannelModel,
  type ChannelUncheckedCreateInput,
  changeBalance,
  encryptSecret,
  type OptionModel,
  type PrismaClient,
  sha256Hex,
  type TokenModel,
  type TokenUncheckedCreateInput,
  type UserModel,
  type UserUncheckedCreateInput,
} from '@modelgate/db';
import { TEST_CRYPTO_SECRET, TEST_PASSWORD } from './constants';
import { LOG_TYPE } from '@modelgate/schemas';


const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

let sequence = 0;
function nextSequence(): number {
  sequence += 1;
  return sequence;
}

const passwordHashes = new Map<string, Promise<string>>();
/** Argon2 is deliberately slow: hash each distinct password once per test file. */
function hashPassword(password: string): Promise<string> {
  let hashed = passwordHashes.get(password);
  if (!hashed) {
    hashed = argon2Hash(password);
    passwordHashes.set(password, hashed);
  }
  return hashed;
}

export type UserOverrides = Partial<UserUncheckedCreateInput> & {
  /** Plain password, hashed with argon2 (default TEST_PASSWORD). Ignored when passwordHash is given. */
  password?: string;
};

/**
 * Creates a user. A starting `quota` is booked like any balance change: with one system log row
 * carrying the same amount, so "quota = sum of the user's log deltas" holds from the start.
 */
export async function createUser(prisma: PrismaClient, overrides: UserOverrides = {}): Promise<UserModel> {
  const { password = TEST_PASSWORD, quota = 0, ...fields } = overrides;
  const data: UserUncheckedCreateInput = {
    username: `user${nextSequence()}_${randomBytes(3).toString('hex')}`,
    passwordHash: fields.passwordHash ?? (await hashPassword(password)),
    ...fields,
  };
  const startingQuota = BigInt(quota);
  return prisma.$transaction(async (tx) => {
    const user = await tx.user.create({ data });
    if (startingQuota === 0n) return user;
    const booked = await changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: 'starting quota (test fixture)', quota: startingQuota });
    if (!booked) throw new Error(`createUser: a starting quota of ${startingQuota} would be negative`);
    return tx.user.findUniqueOrThrow({ where: { id: user.id } });
  });
}

/** `sk-` followed by 48 letters and digits, the key format clients send. */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 48; i++) body += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return `sk-${body}`;
}

export type ApiKeyOverrides = Partial<Omit<TokenUncheckedCreateInput, 'userId' | 'keyHash' | 'keyPrefix' | 'keySuffix'>> & {
  /** The full key (default: a fresh random one). */
  key?: string;
};

/**
 * Creates an API key for `userId`: the row keeps only the SHA-256 of the full key plus its first and
 * last 4 characters after `sk-`. Defaults: enabled, never expires, 1,000,000,000 quota remaining.
 */
export async function createApiKey(
  prisma: PrismaClient,
  userId: number,
  overrides: ApiKeyOverrides = {},
): Promise<{ token: TokenModel; key: string }> {
  const { key = generateApiKey(), ...fields } = overrides;
  const body = key.startsWith('sk-') ? key.slice(3) : key;
  const token = await prisma.token.create({
    data: {
      name: `key ${nextSequence()}`,
      remainQuota: 1_000_000_000,
      ...fields,
      userId,
      keyHash: sha256Hex(key),
      keyPrefix: body.slice(0, 4),
      keySuffix: body.slice(-4),
    },
  });
  return { token, key };
}

export type ChannelOverrides = Partial<Omit<ChannelUncheckedCreateInput, 'keyEnc'>> & {
  /** The upstream key in plain text (default `sk-upstream-test`), stored encrypted. */
  key?: string;
  /** Default: CRYPTO_SECRET from the environment, else TEST_CRYPTO_SECRET. */
  cryptoSecret?: string;
};

/** Creates an enabled OpenAI-compatible channel for group `default` (override base_url to a fake upstream). */
export async function createChannel(prisma: PrismaClient, overrides: ChannelOverrides = {}): Promise<ChannelModel> {
  const {
    key = 'sk-upstream-test',
    cryptoSecret = process.env.CRYPTO_SECRET || TEST_CRYPTO_SECRET,
    ...fields
  } = overrides;
  return prisma.channel.create({
    data: {
      type: 1,
      name: `channel ${nextSequence()}`,
      models: 'gpt-3.5-turbo-instruct',
      ...fields,
      keyEnc: encryptSecret(key, cryptoSecret),
    },
  });
}

/** Stores an option as the account service does: text, with numbers and booleans as text and objects as JSON. */
export async function setOption(
  prisma: PrismaClient,
  key: string,
  value: string | number | boolean | object,
): Promise<OptionModel> {
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return prisma.option.upsert({ where: { key }, create: { key, value: text }, update: { value: text } });
}
