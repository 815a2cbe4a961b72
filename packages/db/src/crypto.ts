// Secrets at rest (channel keys, TOTP secrets) and lookup hashes (API keys, access tokens).
import { createCipheriv, createDecipheriv, createHash, hash, randomBytes } from 'node:crypto';

const FORMAT_VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Raised for ciphertext that is malformed, tampered with, or sealed under another CRYPTO_SECRET. */
export class SecretDecryptionError extends Error {
  constructor(reason: string) {
    super(`cannot decrypt secret: ${reason}`);
    this.name = 'SecretDecryptionError';
  }
}

/** One-shot hash: a third of createHash's cost, and every relayed call hashes its key. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

function keyFrom(cryptoSecret: string): Buffer {
  if (!cryptoSecret) throw new Error('CRYPTO_SECRET is empty');
  return createHash('sha256').update(cryptoSecret, 'utf8').digest();
}

/** AES-256-GCM with a fresh IV: `v1.<iv>.<tag>.<data>`, each part base64url. */
export function encryptSecret(plaintext: string, cryptoSecret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, keyFrom(cryptoSecret), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT_VERSION, iv.toString('base64url'), tag.toString('base64url'), data.toString('base64url')].join('.');
}

export function decryptSecret(sealed: string, cryptoSecret: string): string {
  const [version, ivText, tagText, dataText, ...extra] = sealed.split('.');
  if (version !== FORMAT_VERSION || ivText === undefined || tagText === undefined || dataText === undefined || extra.length > 0) {
    throw new SecretDecryptionError('unknown format');
  }
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretDecryptionError('unknown format');
  const decipher = createDecipheriv(ALGORITHM, keyFrom(cryptoSecret), iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError('authentication failed');
  }
}
