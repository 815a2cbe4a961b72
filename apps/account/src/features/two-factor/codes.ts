import { createHmac, randomInt } from 'node:crypto';
import speakeasy from 'speakeasy';

export const TOTP_STEP_SECONDS = 30;
const ISSUER = 'Modelgate';
/** No 0/O or 1/I: backup codes are read off paper. */
const BACKUP_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const BACKUP_CODE_COUNT = 4;

export function generateTotpSecret(): string {
  return speakeasy.generateSecret({ length: 20 }).base32;
}

export function otpauthUri(secretBase32: string, username: string): string {
  return speakeasy.otpauthURL({
    secret: secretBase32,
    encoding: 'base32',
    label: `${ISSUER}:${username}`,
    issuer: ISSUER,
    algorithm: 'sha1',
    digits: 6,
    period: TOTP_STEP_SECONDS,
  });
}

/** The time step a 6-digit code belongs to (current step +-1), or undefined when it matches none. */
export function matchTotpStep(secretBase32: string, code: string, nowMs: number): number | undefined {
  const seconds = nowMs / 1000;
  const match = speakeasy.totp.verifyDelta({
    secret: secretBase32,
    encoding: 'base32',
    token: code,
    window: 1,
    time: seconds,
    step: TOTP_STEP_SECONDS,
  });
  return match ? Math.floor(seconds / TOTP_STEP_SECONDS) + match.delta : undefined;
}

export function isTotpCode(code: string): boolean {
  return /^[0-9]{6}$/.test(code);
}

/** `XXXX-XXXX` from a CSPRNG, each character drawn uniformly. */
export function generateBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () => {
    let text = '';
    for (let i = 0; i < 8; i++) text += BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)];
    return `${text.slice(0, 4)}-${text.slice(4)}`;
  });
}

/** Case, hyphens and spaces do not matter; undefined when the text cannot be a backup code. */
export function normalizeBackupCode(code: string): string | undefined {
  const normalized = code.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z0-9]{8}$/.test(normalized) ? normalized : undefined;
}

/**
 * Keyed hash of a normalised backup code: 40 bits of entropy are brute-forceable from a plain hash,
 * not from an HMAC whose key (CRYPTO_SECRET) is not in the database.
 */
export function hashBackupCode(normalized: string, cryptoSecret: string): string {
  return createHmac('sha256', cryptoSecret).update(`backup-code:${normalized}`).digest('hex');
}
