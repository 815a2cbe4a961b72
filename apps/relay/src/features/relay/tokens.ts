import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';

/**
 * The o200k tokenizer, loaded on first use: its tables cost ~55 MB of resident memory, and it is
 * only needed when an upstream reports no usage (OpenAI and Gemini always do; the relay asks
 * OpenAI streams for it). Loading it holds the event loop once, for ~0.25 s.
 */
let o200k: typeof O200k | undefined;

/** Special-token markers (`<|endoftext|>`) in a text are counted as the plain text they are. */
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Longest run of letters, of punctuation or of spaces given to the tokenizer in one piece. Its
 * pre-tokenizer splits text at the changes between these (and numbers into threes), and BPE on one
 * such piece costs the square of its length: 32 KB of one letter took half a second, 16 KB of
 * spaces a sixth. Longer runs (base64 without digits, padding) are counted piece by piece, which may
 * differ from the exact count by a token per piece; ordinary text and JSON are counted exactly.
 */
const MAX_RUN_CHARS = 64;
const LONG_RUN = new RegExp(`[\\p{L}\\p{M}]{${MAX_RUN_CHARS + 1},}|[^\\s\\p{L}\\p{N}]{${MAX_RUN_CHARS + 1},}|\\s{${MAX_RUN_CHARS + 1},}`, 'gu');

function countPiece(text: string): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  o200k ??= require('gpt-tokenizer/encoding/o200k_base') as typeof O200k;
  return o200k.countTokens(text, AS_PLAIN_TEXT);
}

/** The tokenizer's count, exact for text without runs longer than MAX_RUN_CHARS; linear in the text's length. */
function countTokens(text: string): number {
  let tokens = 0;
  let at = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    if (match.index > at) tokens += countPiece(text.slice(at, match.index));
    const run = match[0];
    for (let start = 0; start < run.length; start += MAX_RUN_CHARS) tokens += countPiece(run.slice(start, start + MAX_RUN_CHARS));
    at = match.index + run.length;
  }
  if (at < text.length) tokens += countPiece(at === 0 ? text : text.slice(at));
  return tokens;
}

/**
 * Bytes per token the reservation assumes: o200k's average on English prose (about 4; code and
 * JSON nearer 3.5, CJK text 3 to 4). Reserving more than the likely prompt would refuse agents'
 * 100k-token prompts to users who can pay for them; when the estimate falls short, settlement
 * still charges the reported count (docs/api.md 2.5).
 */
const RESERVED_BYTES_PER_TOKEN = 4;

/**
 * Above this length a text is not tokenized whole: a prompt the upstream did not count is charged at
 * 4 characters per token, a delivered text at the rate its first this-many characters have. BPE
 * costs up to ~3 ms per 1000 characters of unfamiliar text (random CJK, base64), and a 32 MB prompt
 * or a hostile upstream's answer must not stall every other request.
 */
const EXACT_COUNT_MAX_CHARS = 16_384;

/**
 * Largest token count the ledger believes: its token columns are INTEGER, and an upstream reporting
 * more (a bug, or a hostile endpoint) would make the whole batch of charges unwritable.
 */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/** Tokens of a prompt text for the reservation: a cheap estimate from its size, no tokenizer. */
export function estimateTextTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(Buffer.byteLength(text, 'utf8') / RESERVED_BYTES_PER_TOKEN);
}

/**
 * A prompt as the model reads it, collected without copying: its texts (referenced, never joined
 * for the reservation) and the tokens of its media (sized, never decoded).
 */
export interface PromptPieces {
  texts: string[];
  mediaTokens: number;
}

/** The reservation's estimate of a prompt (docs/api.md 2.5): its texts by size, no tokenizer. */
export function estimatePromptTokens(pieces: PromptPieces): number {
  let tokens = pieces.mediaTokens;
  for (const text of pieces.texts) tokens += estimateTextTokens(text);
  return tokens;
}

/**
 * A prompt's tokens as charged when the upstream reports none: the texts counted as one (so a long
 * prompt of many short messages is not tokenized piece by piece), media as reserved.
 */
export function countPromptTokens(pieces: PromptPieces): number {
  return countPromptTextTokens(pieces.texts.join('\n')) + pieces.mediaTokens;
}

/** Tokens of a prompt text the upstream did not count, as charged. */
export function countPromptTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length > EXACT_COUNT_MAX_CHARS) return Math.ceil(text.length / 4);
  return countTokens(text);
}

/**
 * Tokens of the text actually delivered (stream chunks joined, counted once at the end): what a call
 * without upstream usage is charged. Up to EXACT_COUNT_MAX_CHARS the tokenizer's count; a longer
 * text is charged at the rate of its first EXACT_COUNT_MAX_CHARS characters (or so, up to a space),
 * so the work stays bounded whatever an upstream sends.
 */
export function countDeliveredTokens(pieces: string[]): number {
  if (pieces.length === 0) return 0;
  const text = pieces.join('');
  if (text.length <= EXACT_COUNT_MAX_CHARS) return countTokens(text);
  // The sample ends before a space where there is one (a word is not cut in two).
  const space = text.lastIndexOf(' ', EXACT_COUNT_MAX_CHARS);
  const sampleLength = space > EXACT_COUNT_MAX_CHARS / 2 ? space : EXACT_COUNT_MAX_CHARS;
  const sampled = countTokens(text.slice(0, sampleLength));
  return Math.min(Math.ceil((sampled * text.length) / sampleLength), MAX_TOKEN_COUNT);
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
