import { changeBalance } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { addressLimitKey, LOG_TYPE, readOptions, USER_STATUS } from '@modelgate/schemas';
import type { Request, Response } from 'express';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { isUniqueViolation } from '../../lib/db';
import { randomAlphanumeric } from '../../lib/random';
import { checkSecondFactor, isTwoFactorEnabled } from '../two-factor/service';
import {
  findActiveUserById,
  findInviterByAffCode,
  findProfile,
  findUserForLogin,
  insertUser,
  isUsernameOrEmailTaken,
} from '../users/repository';
import { AFF_CODE_LENGTH } from '../users/fields';
import { loginView } from '../users/views';
import { hashPassword, verifyPassword } from './passwords';
import { consumeOrThrow, ensureNotLimited, rateLimitsOf, recordFailure } from './rate-limits';
import { sessionStoreOf } from './sessions';

export const PENDING_LOGIN_MS = 5 * 60 * 1000;

export interface Registration {
  username: string;
  password: string;
  email?: string;
  aff_code?: string;
}

/**
 * docs/api.md 3.1 registration: the new user's bonus (QuotaForNewUser, plus QuotaForInvitee when
 * invited) and the inviter's reward are booked in the same transaction as the user, with ledger rows.
 */
export async function register(deps: AccountDeps, req: Request, input: Registration): Promise<{ id: number; username: string }> {
  const limits = rateLimitsOf(deps);
  await consumeOrThrow(limits.registerByIp, addressLimitKey(req.ip));
  await consumeOrThrow(limits.registerByUsername, input.username.toLowerCase());
  const options = await readOptions(deps.prisma);
  if (!options.RegisterEnabled) throw new AppError('forbidden', 'registration is disabled');
  const taken = await isUsernameOrEmailTaken(deps.prisma, input.username, input.email);
  if (taken) throw new AppError('conflict', `${taken} already taken`);
  const passwordHash = await hashPassword(input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
  try {
    return await deps.prisma.$transaction(async (tx) => {
      const inviter = input.aff_code ? await findInviterByAffCode(tx, input.aff_code) : null;
      const bonus = BigInt(options.QuotaForNewUser) + (inviter ? BigInt(options.QuotaForInvitee) : 0n);
      const user = await insertUser(tx, {
        username: input.username,
        passwordHash,
        email: input.email,
        inviterId: inviter?.id,
        affCode: randomAlphanumeric(AFF_CODE_LENGTH),
      });
      if (bonus > 0n) {
        await changeBalance(tx, {
          userId: user.id,
          type: LOG_TYPE.system,
          content: inviter ? `registration bonus (invited by ${inviter.username})` : 'registration bonus',
          quota: bonus,
          requestId: req.requestId,
        });
      }
      if (inviter) {
        const reward = BigInt(options.QuotaForInviter);
        // The reward lands in aff_quota, not quota: the row records it with a quota delta of 0.
        await changeBalance(tx, {
          userId: inviter.id,
          type: LOG_TYPE.system,
          content: `invitation reward: ${reward} added to affiliate quota for inviting ${user.username}`,
          quota: 0n,
          affQuota: reward,
          affHistoryQuota: reward,
          affCount: 1,
          requestId: req.requestId,
        });
      }
      return user;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', 'username or email already taken');
    throw err;
  }
}

export async function login(deps: AccountDeps, req: Request, res: Response, input: { username: string; password: string }) {
  const limits = rateLimitsOf(deps);
  const address = addressLimitKey(req.ip);
  // The address never holds a space: the key splits one way only, whatever the username.
  const userAtAddress = `${address} ${input.username.toLowerCase()}`;
  await consumeOrThrow(limits.loginByIp, address);
  await ensureNotLimited(limits.loginFailuresByUserAndAddress, userAtAddress);
  await ensureNotLimited(limits.loginFailuresByAddress, address);
  const user = await findUserForLogin(deps.prisma, input.username);
  const valid = await verifyPassword(user?.passwordHash, input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
  if (!user || !valid) {
    await Promise.all([recordFailure(limits.loginFailuresByUserAndAddress, userAtAddress), recordFailure(limits.loginFailuresByAddress, address)]);
    throw new AppError('invalid_credentials', 'wrong username or password');
  }
  // Only this account's count: a login to an account of one's own must not clear the address's count.
  await limits.loginFailuresByUserAndAddress.delete(userAtAddress).catch(() => undefined);
  if (user.status !== USER_STATUS.enabled) throw new AppError('user_disabled', 'user is disabled');
  const sessions = sessionStoreOf(deps);
  if (await isTwoFactorEnabled(deps, user.id)) {
    await sessions.rotate(req, res, { pending: { userId: user.id, expiresAt: nowMs(deps) + PENDING_LOGIN_MS } });
    return { require_2fa: true };
  }
  await sessions.rotate(req, res, { userId: user.id });
  return loginView(user);
}

/** Second login step: the pending login of this session plus a TOTP or backup code. */
export async function completeTwoFactorLogin(deps: AccountDeps, req: Request, res: Response, code: string) {
  const sessions = sessionStoreOf(deps);
  const session = await sessions.load(req);
  const pending = session?.data.pending;
  if (!pending || pending.expiresAt <= nowMs(deps)) {
    throw new AppError('unauthorized', 'no pending login, or it expired: log in with your password again');
  }
  const owner = await findActiveUserById(deps.prisma, pending.userId);
  if (!owner) throw new AppError('unauthorized', 'not logged in');
  // The password this login proved is no longer the user's: the pending login died with it.
  if (owner.passwordChangedAt && (session.data.issuedAt ?? 0) < owner.passwordChangedAt.getTime()) {
    throw new AppError('unauthorized', 'the password changed since this login: log in with your password again');
  }
  await consumeOrThrow(rateLimitsOf(deps).twoFactorByIp, addressLimitKey(req.ip));
  await checkSecondFactor(deps, pending.userId, code, true);
  const user = await findProfile(deps.prisma, pending.userId);
  if (!user) throw new AppError('unauthorized', 'not logged in');
  if (user.status !== USER_STATUS.enabled) throw new AppError('user_disabled', 'user is disabled');
  await sessions.rotate(req, res, { userId: user.id });
  return loginView(user);
}

/** Re-issues the caller's session (when it uses one) after a password change voided the old ids. */
export async function reissueSession(deps: AccountDeps, req: Request, res: Response, userId: number): Promise<void> {
  const sessions = sessionStoreOf(deps);
  if (sessions.idFromRequest(req)) await sessions.rotate(req, res, { userId });
}

export async function logout(deps: AccountDeps, req: Request, res: Response): Promise<void> {
  await sessionStoreOf(deps).destroy(req, res);
}
