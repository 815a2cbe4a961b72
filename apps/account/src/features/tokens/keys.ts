import { isIP } from 'node:net';
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

/** An IP or CIDR (v4 or v6), or undefined when the text is neither. */
function normalizeIpOrCidr(entry: string): string | undefined {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (!version || rest.length > 0) return undefined;
  if (prefix === undefined) return address;
  const bits = /^[0-9]{1,3}$/.test(prefix) ? Number(prefix) : NaN;
  return bits >= 0 && bits <= (version === 4 ? 32 : 128) ? `${address}/${bits}` : undefined;
}

/** Newline (or comma) separated IPs/CIDRs -> newline separated; the first bad entry is returned as an error. */
export function normalizeAllowIps(text: string): { value: string } | { invalid: string } {
  const entries = text.split(/[\n,]/).map((entry) => entry.trim()).filter(Boolean);
  const normalized: string[] = [];
  for (const entry of entries) {
    const ip = normalizeIpOrCidr(entry);
    if (!ip) return { invalid: entry };
    normalized.push(ip);
  }
  return { value: normalized.join('\n') };
}

/** Comma-separated model names, trimmed, empties dropped. */
export function normalizeModelList(text: string): string {
  return text.split(',').map((model) => model.trim()).filter(Boolean).join(',');
}
