import { changeBalance, type RedemptionModel } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { addressLimitKey, LOG_TYPE, REDEMPTION_NEVER_EXPIRES, REDEMPTION_STATUS, type RedemptionView } from '@modelgate/schemas';
import type { Request } from 'express';
import type { AccountDeps } from '../../deps';
import { nowMs, unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { publishInvalidation } from '../../lib/invalidation';
import type { AuthenticatedUser } from '../auth/require-user';
import { consumeOrThrow } from '../auth/rate-limits';
import { generateRedemptionCode, hashRedemptionCode, maskedCode } from './codes';
import { redemptionRateLimitsOf } from './rate-limits';
import {
  claimRedemption,
  deleteRedemption,
  findRedemption,
  findRedemptionPage,
  findRedemptionStateByHash,
  insertRedemptions,
  updateUnusedRedemption,
} from './repository';

function redemptionView(row: RedemptionModel): RedemptionView {
  return {
    id: row.id,
    name: row.name,
    key: maskedCode(row.codePrefix),
    quota: Number(row.quota),
    status: row.status,
    created_by: row.createdBy,
    created_at: unixSeconds(row.createdAt),
    expired_time: row.expiresAt ? unixSeconds(row.expiresAt) : REDEMPTION_NEVER_EXPIRES,
    redeemed_by: row.redeemedBy,
    redeemed_at: unixSeconds(row.redeemedAt),
  };
}

/** `expired_time` as a column value: null for never (-1, or new-api's 0), else a time that must be ahead. */
function expiryOf(deps: AccountDeps, expiredTime: number): Date | null {
  if (expiredTime === REDEMPTION_NEVER_EXPIRES || expiredTime === 0) return null;
  if (expiredTime * 1000 <= nowMs(deps)) {
    throw new AppError('invalid_request', 'expired_time: must be in the future, or -1 for never', { param: 'expired_time' });
  }
  return new Date(expiredTime * 1000);
}

export interface RedemptionBatch {
  name: string;
  quota: number;
  count: number;
  expired_time?: number;
}

/** docs/api.md 3.9.5: the codes themselves, this once; the database keeps their hashes. */
export async function createRedemptions(deps: AccountDeps, actor: AuthenticatedUser, input: RedemptionBatch): Promise<string[]> {
  const expiresAt = input.expired_time === undefined ? null : expiryOf(deps, input.expired_time);
  const generated = Array.from({ length: input.count }, generateRedemptionCode);
  await insertRedemptions(
    deps.prisma,
    generated.map(({ codeHash, codePrefix }) => ({ name: input.name, codeHash, codePrefix, quota: BigInt(input.quota), createdBy: actor.id, expiresAt })),
  );
  return generated.map(({ code }) => code);
}

export async function listRedemptions(deps: AccountDeps, keyword: string | undefined, page: PageRequest): Promise<Page<RedemptionView>> {
  const { total, rows } = await findRedemptionPage(deps.prisma, keyword, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(redemptionView) };
}

export async function getRedemption(deps: AccountDeps, id: number): Promise<RedemptionView> {
  const row = await findRedemption(deps.prisma, id);
  if (!row) throw new AppError('not_found', 'redemption code not found');
  return redemptionView(row);
}

export interface RedemptionUpdate {
  id: number;
  name?: string;
  status?: number;
  quota?: number;
  expired_time?: number;
}

/** Edits an unused code; a used one is history (its top-up is booked): 400. */
export async function updateRedemption(deps: AccountDeps, input: RedemptionUpdate): Promise<RedemptionView> {
  const updated = await updateUnusedRedemption(deps.prisma, input.id, {
    name: input.name,
    status: input.status,
    quota: input.quota === undefined ? undefined : BigInt(input.quota),
    expiresAt: input.expired_time === undefined ? undefined : expiryOf(deps, input.expired_time),
  });
  if (updated) return redemptionView(updated);
  if (!(await findRedemption(deps.prisma, input.id))) throw new AppError('not_found', 'redemption code not found');
  throw new AppError('invalid_request', 'id: this redemption code has been used and can no longer be changed', { param: 'id' });
}

export async function removeRedemption(deps: AccountDeps, id: number): Promise<void> {
  if (!(await deleteRedemption(deps.prisma, id))) throw new AppError('not_found', 'redemption code not found');
}

/** Why a code that could not be claimed is refused; unknown and used read the same, so neither is revealed. */
async function refusalOf(deps: AccountDeps, codeHash: string, now: number): Promise<AppError> {
  const state = await findRedemptionStateByHash(deps.prisma, codeHash);
  let message = 'key: this redemption code is not valid or has already been used';
  if (state?.status === REDEMPTION_STATUS.disabled) message = 'key: this redemption code has been disabled';
  else if (state?.status === REDEMPTION_STATUS.enabled && state.expiresAt && state.expiresAt.getTime() <= now) message = 'key: this redemption code has expired';
  return new AppError('invalid_request', message, { param: 'key' });
}

/**
 * docs/api.md 3.9.5: claims the code and credits its quota with one top-up log row, in one
 * transaction; returns the quota added. Each attempt takes a point from the caller's and the
 * address's failure budgets before the code is looked at (so a burst of parallel guesses cannot
 * all pass a check made before any of them failed); a success gives them back.
 */
export async function redeemCode(deps: AccountDeps, req: Request, user: AuthenticatedUser, key: string): Promise<number> {
  const limits = redemptionRateLimitsOf(deps);
  const userKey = String(user.id);
  const address = addressLimitKey(req.ip);
  await consumeOrThrow(limits.failuresByUser, userKey);
  await consumeOrThrow(limits.failuresByAddress, address);
  const codeHash = hashRedemptionCode(key);
  const now = nowMs(deps);
  const credited = await deps.prisma.$transaction(async (tx) => {
    const claimed = await claimRedemption(tx, codeHash, user.id, new Date(now));
    if (!claimed) return undefined;
    const after = await changeBalance(tx, {
      userId: user.id,
      type: LOG_TYPE.topup,
      content: `redeemed code ${maskedCode(claimed.codePrefix)} (${claimed.name})`,
      quota: claimed.quota,
      requestId: req.requestId,
      other: { redemption_id: claimed.id },
    });
    // requireUser has just read the user: a user gone meanwhile gets nothing and the code stays unused.
    if (!after) throw new AppError('unauthorized', 'not logged in');
    return claimed.quota;
  });
  if (credited === undefined) throw await refusalOf(deps, codeHash, now);
  await Promise.all([limits.failuresByUser.reward(userKey, 1), limits.failuresByAddress.reward(address, 1)]).catch(() => undefined);
  // The relays' balance mirror reads the new quota again (as after a Stripe top-up).
  await publishInvalidation(deps, { kind: 'user', userId: user.id });
  return Number(credited);
}
