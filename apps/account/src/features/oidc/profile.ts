import { randomInt } from 'node:crypto';
import { emailSchema } from '@modelgate/schemas';

/** The claims a new user is made from (ID token, completed by the userinfo endpoint). */
export interface IdentityClaims {
  readonly [claim: string]: unknown;
  preferred_username?: unknown;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
  nickname?: unknown;
}

const USERNAME_MIN = 3;
const USERNAME_MAX = 20;
const FALLBACK_USERNAME = 'user';
const DISPLAY_NAME_MAX = 20;

/**
 * Registration's username rule (3..20 of A-Z a-z 0-9 _) applied to what the provider calls the
 * user: the part before an `@` (Entra ID's preferred_username is an address), accents dropped,
 * other characters as `_`. The first claim that leaves 3 characters wins.
 */
export function usernameBase(claims: IdentityClaims): string {
  for (const claim of [claims.preferred_username, claims.nickname, claims.email, claims.name]) {
    if (typeof claim !== 'string') continue;
    const local = claim.split('@', 1)[0] ?? '';
    const cleaned = local
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .replace(/[^A-Za-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, USERNAME_MAX);
    if (cleaned.length >= USERNAME_MIN) return cleaned;
  }
  return FALLBACK_USERNAME;
}

/** The base with `_` and four random digits, cut so the whole stays within 20 characters. */
export function suffixedUsername(base: string): string {
  const suffix = `_${String(randomInt(10_000)).padStart(4, '0')}`;
  return base.slice(0, USERNAME_MAX - suffix.length) + suffix;
}

/** The email, only when the provider says it verified it (some send the flag as text). */
export function verifiedEmail(claims: IdentityClaims): string | undefined {
  if (claims.email_verified !== true && claims.email_verified !== 'true') return undefined;
  const parsed = emailSchema.safeParse(claims.email);
  return parsed.success ? parsed.data : undefined;
}

/** The `name` claim, cut to the display name's 20 characters (whole characters: no half surrogate pair). */
export function displayNameOf(claims: IdentityClaims): string | undefined {
  if (typeof claims.name !== 'string') return undefined;
  const characters = [...claims.name.trim()];
  while (characters.join('').length > DISPLAY_NAME_MAX) characters.pop();
  return characters.join('') || undefined;
}
