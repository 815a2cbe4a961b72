import { sha256Hex } from '@modelgate/db';
import { randomAlphanumeric } from '../../lib/random';

/** 32 letters and digits from the CSPRNG: about 190 bits, beyond any guessing. */
export const REDEMPTION_CODE_LENGTH = 32;
const PREFIX_LENGTH = 4;

export interface NewRedemptionCode {
  code: string;
  codeHash: string;
  codePrefix: string;
}

/** A fresh code; only its SHA-256 and first characters are ever stored. */
export function generateRedemptionCode(): NewRedemptionCode {
  const code = randomAlphanumeric(REDEMPTION_CODE_LENGTH);
  return { code, codeHash: hashRedemptionCode(code), codePrefix: code.slice(0, PREFIX_LENGTH) };
}

export function hashRedemptionCode(code: string): string {
  return sha256Hex(code);
}

/** `AbCd…`: tells codes apart in lists and logs without revealing them. */
export function maskedCode(prefix: string): string {
  return `${prefix}…`;
}
