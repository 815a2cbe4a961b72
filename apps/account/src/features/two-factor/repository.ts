import { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

/** A JS epoch-ms instant as a `timestamp` (UTC, as Prisma stores DateTime) inside raw SQL. */
function at(ms: number): Prisma.Sql {
  return Prisma.sql`(to_timestamp(${ms}::float8 / 1000) AT TIME ZONE 'UTC')`;
}

export async function findTwoFactor(db: Db, userId: number) {
  return db.twoFactor.findUnique({ where: { userId } });
}

/** Stores a new (not yet enabled) secret and backup codes, replacing any unfinished setup. */
export async function saveSetup(db: Db, userId: number, secretEnc: string, backupCodeHashes: string[]): Promise<void> {
  await db.twoFactor.upsert({
    where: { userId },
    create: { userId, secretEnc, enabled: false },
    update: { secretEnc, enabled: false, lastUsedStep: null, failedAttempts: 0, lockedUntil: null },
  });
  await replaceBackupCodes(db, userId, backupCodeHashes);
}

export async function replaceBackupCodes(db: Db, userId: number, codeHashes: string[]): Promise<void> {
  await db.backupCode.deleteMany({ where: { userId } });
  await db.backupCode.createMany({ data: codeHashes.map((codeHash) => ({ userId, codeHash })) });
}

export async function countUnusedBackupCodes(db: Db, userId: number): Promise<number> {
  return db.backupCode.count({ where: { userId, usedAt: null } });
}

/** Enables a finished setup; false when it was enabled meanwhile. */
export async function markEnabled(db: Db, userId: number): Promise<boolean> {
  const { count } = await db.twoFactor.updateMany({ where: { userId, enabled: false }, data: { enabled: true } });
  return count === 1;
}

export async function removeTwoFactor(db: Db, userId: number): Promise<void> {
  await db.backupCode.deleteMany({ where: { userId } });
  await db.twoFactor.deleteMany({ where: { userId } });
}

export type AttemptReservation = { reserved: true; failedAttempts: number } | { reserved: false; lockedUntilMs: number | null };

/** How 2FA lockouts grow: each further lockout of a streak lasts twice the one before, up to `maxLockMs`. */
export interface LockoutPolicy {
  /** Failures that set a lockout (then as many again for each further one). */
  maxFailures: number;
  /** The first lockout. */
  lockMs: number;
  maxLockMs: number;
  /** A streak ends when its last lockout ended this long ago: the next one is `lockMs` again. */
  streakResetMs: number;
}

/**
 * Counts one check as a failure before the code is even looked at, in one conditional UPDATE: row
 * locks serialise concurrent checks, so 20 parallel guesses get exactly `maxFailures` tries and the
 * rest find the lock. Failures add up over a streak: the attempt that reaches each multiple of
 * `maxFailures` sets the next lockout, doubled each time (`locked_until` stays after it ends, so the
 * streak is remembered). A correct code clears the count and the streak (see acceptTotpStep / useBackupCode).
 */
export async function reserveAttempt(db: Db, userId: number, nowMs: number, policy: LockoutPolicy): Promise<AttemptReservation> {
  const { maxFailures, lockMs, maxLockMs, streakResetMs } = policy;
  const streakOver = Prisma.sql`locked_until <= ${at(nowMs - streakResetMs)}`;
  const counted = Prisma.sql`CASE WHEN ${streakOver} THEN 1 ELSE failed_attempts + 1 END`;
  // The exponent is capped so that power() stays finite; the duration is capped by maxLockMs anyway.
  const lockoutMs = Prisma.sql`LEAST(${lockMs}::float8 * power(2, LEAST(${counted} / ${maxFailures}::int - 1, 30)), ${maxLockMs}::float8)`;
  const rows = await db.$queryRaw<{ failed_attempts: number }[]>`
    UPDATE two_factor
       SET failed_attempts = ${counted},
           locked_until = CASE WHEN ${counted} % ${maxFailures}::int = 0
                               THEN (to_timestamp((${nowMs}::float8 + ${lockoutMs}) / 1000) AT TIME ZONE 'UTC')
                               WHEN ${streakOver} THEN NULL
                               ELSE locked_until END,
           updated_at = ${at(nowMs)}
     WHERE user_id = ${userId} AND (locked_until IS NULL OR locked_until <= ${at(nowMs)})
     RETURNING failed_attempts`;
  const [reserved] = rows;
  if (reserved) return { reserved: true, failedAttempts: Number(reserved.failed_attempts) };
  const locked = await db.$queryRaw<{ locked_until_ms: number | null }[]>`
    SELECT (EXTRACT(EPOCH FROM locked_until AT TIME ZONE 'UTC') * 1000)::float8 AS locked_until_ms
      FROM two_factor WHERE user_id = ${userId}`;
  return { reserved: false, lockedUntilMs: locked[0]?.locked_until_ms ?? null };
}

/**
 * Accepts a TOTP time step only if it is newer than every step accepted before (replay rule), and
 * clears the failure count. Conditional, so concurrent uses of one code give exactly one success.
 */
export async function acceptTotpStep(db: Db, userId: number, step: number, nowMs: number): Promise<boolean> {
  const count = await db.$executeRaw`
    UPDATE two_factor
       SET last_used_step = ${BigInt(step)}, failed_attempts = 0, locked_until = NULL, updated_at = ${at(nowMs)}
     WHERE user_id = ${userId} AND (last_used_step IS NULL OR last_used_step < ${BigInt(step)})`;
  return count === 1;
}

/** Spends an unused backup code (single use even under concurrency) and clears the failure count. */
export async function useBackupCode(db: Db, userId: number, codeHash: string, nowMs: number): Promise<boolean> {
  const count = await db.$executeRaw`
    UPDATE backup_codes SET used_at = ${at(nowMs)}
     WHERE id = (SELECT id FROM backup_codes WHERE user_id = ${userId} AND code_hash = ${codeHash} AND used_at IS NULL LIMIT 1)
       AND used_at IS NULL`;
  if (count !== 1) return false;
  await db.$executeRaw`
    UPDATE two_factor SET failed_attempts = 0, locked_until = NULL, updated_at = ${at(nowMs)} WHERE user_id = ${userId}`;
  return true;
}
