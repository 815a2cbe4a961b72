import { changeBalance } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { LOG_TYPE, readOptions } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { isUniqueViolation } from '../../lib/db';
import { publishInvalidation } from '../../lib/invalidation';
import { randomAlphanumeric } from '../../lib/random';
import { hashPassword, verifyPassword } from '../auth/passwords';
import { hashAccessToken } from '../auth/require-user';
import { findAffCode, findPasswordHash, findProfile, setAffCodeIfMissing, updateUser } from './repository';
import { AFF_CODE_LENGTH } from './fields';
import { selfView } from './views';

export const ACCESS_TOKEN_LENGTH = 32;

export async function getSelf(deps: AccountDeps, userId: number) {
  const user = await findProfile(deps.prisma, userId);
  if (!user) throw new AppError('unauthorized', 'not logged in');
  return selfView(user);
}

export interface SelfUpdate {
  display_name?: string;
  email?: string;
  password?: string;
  original_password?: string;
}

export async function updateSelf(deps: AccountDeps, userId: number, input: SelfUpdate) {
  const data: { displayName?: string; email?: string | null; passwordHash?: string; passwordChangedAt?: Date; accessTokenHash?: null } = {};
  if (input.display_name !== undefined) data.displayName = input.display_name;
  if (input.email !== undefined) data.email = input.email === '' ? null : input.email;
  if (input.password !== undefined) {
    if (input.original_password === undefined) {
      throw new AppError('invalid_request', 'original_password: required to change the password', { param: 'original_password' });
    }
    const current = await findPasswordHash(deps.prisma, userId);
    if (!(await verifyPassword(current, input.original_password, deps.env.PASSWORD_HASH_MEMORY_KIB))) {
      throw new AppError('invalid_credentials', 'original_password: wrong password');
    }
    data.passwordHash = await hashPassword(input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
    // Every session issued before now stops working; the caller's own is re-issued by the router.
    data.passwordChangedAt = new Date(nowMs(deps));
    // So does the access token: whoever held the old password could have fetched it.
    data.accessTokenHash = null;
  }
  try {
    await updateUser(deps.prisma, userId, data);
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', 'email already taken');
    throw err;
  }
  return getSelf(deps, userId);
}

/** A fresh access token; the previous one stops working (only its hash was stored). */
export async function issueAccessToken(deps: AccountDeps, userId: number): Promise<string> {
  const token = randomAlphanumeric(ACCESS_TOKEN_LENGTH);
  await updateUser(deps.prisma, userId, { accessTokenHash: hashAccessToken(token) });
  return token;
}

export async function getAffCode(deps: AccountDeps, userId: number): Promise<string> {
  const existing = await findAffCode(deps.prisma, userId);
  if (existing) return existing;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await setAffCodeIfMissing(deps.prisma, userId, randomAlphanumeric(AFF_CODE_LENGTH));
      break;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  const code = await findAffCode(deps.prisma, userId);
  if (!code) throw new AppError('internal_error', 'could not create an affiliate code');
  return code;
}

/** docs/api.md 3.2: affiliate quota -> quota, at least QuotaPerUnit, never more than there is; one ledger row. */
export async function transferAffQuota(deps: AccountDeps, userId: number, amount: number, requestId: string) {
  const { QuotaPerUnit } = await readOptions(deps.prisma);
  if (amount < QuotaPerUnit) {
    throw new AppError('invalid_request', `quota: must be at least ${QuotaPerUnit}`, { param: 'quota' });
  }
  // Refused (undefined) when aff_quota holds less: concurrent transfers serialise on the user's row
  // and each re-checks, so together they never move more than there is.
  const moved = await deps.prisma.$transaction((tx) =>
    changeBalance(tx, {
      userId,
      type: LOG_TYPE.system,
      content: `affiliate quota transferred to balance: ${amount}`,
      quota: BigInt(amount),
      affQuota: -BigInt(amount),
      requestId,
    }),
  );
  if (!moved) throw new AppError('invalid_request', 'quota: more than the affiliate quota available', { param: 'quota' });
  await publishInvalidation(deps, { kind: 'user', userId });
  return { quota: Number(moved.quota), aff_quota: Number(moved.affQuota) };
}
