import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Above this length a reservation estimates text at 4 characters per token instead of tokenizing:
 * BPE costs ~0.2 ms per KB on this event loop, and a 32 MB prompt must not stall every other
 * request before the call even starts. Charges never use this estimate (see countDeliveredTokens).
 */
const EXACT_ESTIMATE_MAX_CHARS = 16_384;

/**
 * Largest token count the ledger believes: its token columns are INTEGER, and an upstream reporting
 * more (a bug, or a hostile endpoint) would make the whole batch of charges unwritable.
 */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/** Tokens of a prompt, for the reservation only. */
export function estimateTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > EXACT_ESTIMATE_MAX_CHARS) return Math.ceil(text.length / 4);
  return countTokens(text);
}

/**
 * Tokens of the text actually delivered (stream chunks joined, counted once at the end), with the
 * real tokenizer whatever the length: this is what a call without upstream usage is charged.
 */
export function countDeliveredTokens(pieces: string[]): number {
  if (pieces.length === 0) return 0;
  const text = pieces.join('');
  return text.length === 0 ? 0 : Math.min(countTokens(text), MAX_TOKEN_COUNT);
}

/** A token count as an upstream reported it, or undefined when it is not a believable one. */
export function reportedTokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_TOKEN_COUNT ? value : undefined;
}

/**
 * The sum of reported counts (an absent one counts 0), or undefined when one of them is not
 * believable or the sum is too large: the caller then falls back to its own count.
 */
export function reportedTokenSum(...values: unknown[]): number | undefined {
  let total = 0;
  for (const value of values) {
    if (value === undefined || value === null) continue;
    const count = reportedTokenCount(value);
    if (count === undefined) return undefined;
    total += count;
  }
  return total <= MAX_TOKEN_COUNT ? total : undefined;
}
