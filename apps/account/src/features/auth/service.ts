import { changeBalance, type Prisma } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { addressLimitKey, LOG_TYPE, readOptions, USER_STATUS } from '@modelgate/schemas';
import type { Request, Response } from 'express';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { isUniqueViolation } from '../../lib/db';
import { randomAlphanumeric } from '../../lib/random';
import { checkSecondFactor, isTwoFactorEnabled } from '../two-factor/service';
import { checkRegistrationEmail } from '../verification/service';
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
  verification_code?: string;
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
  if (options.EmailVerificationEnabled) await checkRegistrationEmail(deps, input.email, input.verification_code);
  const passwordHash = await hashPassword(input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
  try {
    return await deps.prisma.$transaction(async (tx) => {
      const inviter = input.aff_code ? await findInviterByAffCode(tx, input.aff_code) : null;
      const user = await createUserWithBonus(tx, {
        username: input.username,
        passwordHash,
        email: input.email,
        inviterId: inviter?.id,
        bonus: BigInt(options.QuotaForNewUser) + (inviter ? BigInt(options.QuotaForInvitee) : 0n),
        bonusContent: inviter ? `registration bonus (invited by ${inviter.username})` : 'registration bonus',
        requestId: req.requestId,
      });
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

export interface NewUser {
  username: string;
  passwordHash: string;
  email?: string;
  displayName?: string;
  inviterId?: number;
  /** QuotaForNewUser, plus QuotaForInvitee when invited. */
  bonus: bigint;
  bonusContent: string;
  requestId?: string;
}

/** Inserts a user and books its starting bonus through the ledger (one system log row), in the caller's transaction. */
export async function createUserWithBonus(tx: Prisma.TransactionClient, input: NewUser): Promise<{ id: number; username: string }> {
  const user = await insertUser(tx, {
    username: input.username,
    passwordHash: input.passwordHash,
    email: input.email,
    displayName: input.displayName,
    inviterId: input.inviterId,
    affCode: randomAlphanumeric(AFF_CODE_LENGTH),
  });
  if (input.bonus > 0n) {
    await changeBalance(tx, { userId: user.id, type: LOG_TYPE.system, content: input.bonusContent, quota: input.bonus, requestId: input.requestId });
  }
  return user;
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
  if ((await startSession(deps, req, res, user.id)) === 'second-factor') return { require_2fa: true };
  return loginView(user);
}

/**
 * A new session id for a user whose first factor (a password, or an identity provider) just held:
 * signed in, or, with 2FA on, a pending login the second step (`completeTwoFactorLogin`) completes.
 */
export async function startSession(deps: AccountDeps, req: Request, res: Response, userId: number): Promise<'signed-in' | 'second-factor'> {
  const sessions = sessionStoreOf(deps);
  if (await isTwoFactorEnabled(deps, userId)) {
    await sessions.rotate(req, res, { pending: { userId, expiresAt: nowMs(deps) + PENDING_LOGIN_MS } });
    return 'second-factor';
  }
  await sessions.rotate(req, res, { userId });
  return 'signed-in';
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
