/**
 * Codes stored in the database and sent on the wire (docs/api.md 1.2, 3.2, 3.3), shared by every
 * service that reads or writes them.
 */

export const ROLE = { user: 1, admin: 10, root: 100 } as const;
export const USER_STATUS = { enabled: 1, disabled: 2 } as const;

/** `logs.type`; a row's `quota` is the signed change it made to the user's quota. */
export const LOG_TYPE = { topup: 1, consume: 2, manage: 3, system: 4, error: 5, refund: 6 } as const;
export type LogType = (typeof LOG_TYPE)[keyof typeof LOG_TYPE];

/** `top_ups.provider` and `payment_events.provider` of Stripe payments. */
export const STRIPE_PROVIDER = 'stripe';

export const CHANNEL_STATUS = { enabled: 1, manuallyDisabled: 2, autoDisabled: 3 } as const;
/**
 * A channel's `model_mapping` text (JSON object: requested model -> upstream model) as a Map (so a
 * model named like an Object.prototype member is an ordinary entry); '' (or blank) maps nothing.
 * Throws an Error saying what is wrong with the text.
 */
export function parseModelMapping(text: string): Map<string, string> {
  const mapping = new Map<string, string>();
  if (text.trim() === '') return mapping;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('must be JSON text of an object mapping model names to model names');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error('must be a JSON object mapping model names to model names');
  }
  for (const [from, to] of Object.entries(parsed)) {
    if (from === '' || typeof to !== 'string' || to === '') {
      throw new Error(`entry ${JSON.stringify(from)} must map a model name to a non-empty model name`);
    }
    mapping.set(from, to);
  }
  return mapping;
}

export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

export interface TokenState {
  status: number;
  /** null: never expires. */
  expiresAt: Date | number | null;
  remainQuota: bigint | number;
  unlimitedQuota: boolean;
}

/** The status a key has now: an enabled key past its expiry or out of quota counts as expired or exhausted. */
export function effectiveTokenStatus(token: TokenState, nowMs: number): number {
  if (token.status !== TOKEN_STATUS.enabled) return token.status;
  const expiresAtMs = token.expiresAt instanceof Date ? token.expiresAt.getTime() : token.expiresAt;
  if (expiresAtMs !== null && expiresAtMs <= nowMs) return TOKEN_STATUS.expired;
  if (!token.unlimitedQuota && token.remainQuota <= 0) return TOKEN_STATUS.exhausted;
  return TOKEN_STATUS.enabled;
}
