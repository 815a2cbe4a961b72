import { sha256Hex } from '@modelgate/db';
import { randomAlphanumeric } from '../../lib/random';

export const KEY_BODY_LENGTH = 48;

export interface NewApiKey {
  key: string;
  keyHash: string;
  keyPrefix: string;
  keySuffix: string;
}

/** `sk-` + 48 alphanumerics; only the SHA-256 and the first/last 4 characters are ever stored. */
export function generateApiKey(): NewApiKey {
  const body = randomAlphanumeric(KEY_BODY_LENGTH);
  const key = `sk-${body}`;
  return { key, keyHash: sha256Hex(key), keyPrefix: body.slice(0, 4), keySuffix: body.slice(-4) };
}

export function maskedKey(prefix: string, suffix: string): string {
  return `sk-${prefix}...${suffix}`;
}
