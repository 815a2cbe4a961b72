import { decryptSecret, encryptSecret } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import type { AuthenticatedUser } from '../auth/require-user';
import {
  generateBackupCodes,
  generateTotpSecret,
  hashBackupCode,
  isTotpCode,
  matchTotpStep,
  normalizeBackupCode,
  otpauthUri,
} from './codes';
import {
  acceptTotpStep,
  countUnusedBackupCodes,
  findTwoFactor,
  markEnabled,
  removeTwoFactor,
  type LockoutPolicy,
  replaceBackupCodes,
  reserveAttempt,
  saveSetup,
  useBackupCode,
} from './repository';

const MINUTE_MS = 60 * 1000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** docs/api.md 3.1: 5 wrong codes lock 2FA checks for 5 minutes, then 10, 20, ... up to a day. */
export const LOCKOUTS: LockoutPolicy = { maxFailures: 5, lockMs: 5 * MINUTE_MS, maxLockMs: DAY_MS, streakResetMs: DAY_MS };

export async function isTwoFactorEnabled(deps: AccountDeps, userId: number): Promise<boolean> {
  return (await findTwoFactor(deps.prisma, userId))?.enabled ?? false;
}

export async function twoFactorStatus(deps: AccountDeps, userId: number) {
  const row = await findTwoFactor(deps.prisma, userId);
  return {
    enabled: row?.enabled ?? false,
    locked: Boolean(row?.lockedUntil && row.lockedUntil.getTime() > nowMs(deps)),
    backup_codes_remaining: row?.enabled ? await countUnusedBackupCodes(deps.prisma, userId) : 0,
  };
}

function newBackupCodes(deps: AccountDeps): { codes: string[]; hashes: string[] } {
  const codes = generateBackupCodes();
  const hashes = codes.map((code) => hashBackupCode(normalizeBackupCode(code)!, deps.env.CRYPTO_SECRET));
  return { codes, hashes };
}

export async function setupTwoFactor(deps: AccountDeps, user: AuthenticatedUser) {
  if (await isTwoFactorEnabled(deps, user.id)) {
    throw new AppError('conflict', 'two-factor authentication is already enabled');
  }
  const secret = generateTotpSecret();
  const { codes, hashes } = newBackupCodes(deps);
  await deps.prisma.$transaction((tx) => saveSetup(tx, user.id, encryptSecret(secret, deps.env.CRYPTO_SECRET), hashes));
  return { secret, qr_code_data: otpauthUri(secret, user.username), backup_codes: codes };
}

/**
 * Checks a second-factor code for a user with a two-factor row: a TOTP (replay rule) or, when
 * allowed, an unused backup code. Every check is counted first (lockouts growing as LOCKOUTS says);
 * a correct code clears the count. Throws 429 while locked, 401 for a wrong, replayed or spent code.
 */
export async function checkSecondFactor(deps: AccountDeps, userId: number, code: string, allowBackupCode: boolean): Promise<void> {
  const row = await findTwoFactor(deps.prisma, userId);
  if (!row) throw new AppError('invalid_credentials', 'two-factor authentication is not set up');
  const now = nowMs(deps);
  const reservation = await reserveAttempt(deps.prisma, userId, now, LOCKOUTS);
  if (!reservation.reserved) {
    const retryAfter = reservation.lockedUntilMs === null ? LOCKOUTS.lockMs / 1000 : (reservation.lockedUntilMs - now) / 1000;
    throw new AppError('two_factor_locked', 'too many wrong codes: two-factor checks are locked, try again later', {
      retryAfter: Math.max(1, retryAfter),
    });
  }
  const candidate = code.trim();
  if (isTotpCode(candidate)) {
    const step = matchTotpStep(decryptSecret(row.secretEnc, deps.env.CRYPTO_SECRET), candidate, now);
    if (step !== undefined && (await acceptTotpStep(deps.prisma, userId, step, now))) return;
  } else if (allowBackupCode) {
    const normalized = normalizeBackupCode(candidate);
    if (normalized && (await useBackupCode(deps.prisma, userId, hashBackupCode(normalized, deps.env.CRYPTO_SECRET), now))) return;
  }
  throw new AppError('invalid_credentials', 'wrong or already used code');
}

async function requireEnabled(deps: AccountDeps, userId: number): Promise<void> {
  if (!(await isTwoFactorEnabled(deps, userId))) {
    throw new AppError('invalid_request', 'two-factor authentication is not enabled');
  }
}

export async function enableTwoFactor(deps: AccountDeps, userId: number, code: string): Promise<void> {
  const row = await findTwoFactor(deps.prisma, userId);
  if (!row) throw new AppError('invalid_request', 'two-factor authentication is not set up: call setup first');
  if (row.enabled) throw new AppError('conflict', 'two-factor authentication is already enabled');
  await checkSecondFactor(deps, userId, code, false);
  if (!(await markEnabled(deps.prisma, userId))) throw new AppError('conflict', 'two-factor authentication is already enabled');
}

export async function disableTwoFactor(deps: AccountDeps, userId: number, code: string): Promise<void> {
  await requireEnabled(deps, userId);
  await checkSecondFactor(deps, userId, code, true);
  await deps.prisma.$transaction((tx) => removeTwoFactor(tx, userId));
}

export async function renewBackupCodes(deps: AccountDeps, userId: number, code: string): Promise<{ backup_codes: string[] }> {
  await requireEnabled(deps, userId);
  await checkSecondFactor(deps, userId, code, false);
  const { codes, hashes } = newBackupCodes(deps);
  await deps.prisma.$transaction((tx) => replaceBackupCodes(tx, userId, hashes));
  return { backup_codes: codes };
}
