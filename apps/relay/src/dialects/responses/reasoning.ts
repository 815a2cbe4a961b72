import type { ContentPart } from '../../core/chat';

/*
 * A reasoning item's `encrypted_content` (docs/api.md 2.10) is where a stateless Responses client
 * (Codex sends `include: ["reasoning.encrypted_content"]` with `store: false`) keeps what a provider
 * needs back on the next turn: the signature of the reasoning (Anthropic thinking, Gemini thought
 * signature) or Anthropic's redacted thinking. It is tagged, so that the reader tells the two apart
 * and ignores OpenAI's own encrypted reasoning (from a turn a native channel served), which no
 * other provider can read: that reasoning goes on as unsigned text.
 */

const SIGNATURE_TAG = 'modelgate.signature:';
const REDACTED_TAG = 'modelgate.redacted:';

/** The reasoning an output reasoning item is made of. */
export type ReasoningPart = Extract<ContentPart, { type: 'reasoning' | 'redacted_reasoning' }>;

/** The `encrypted_content` of a reasoning item, or undefined when there is nothing to carry. */
export function encryptedContentOf(part: ReasoningPart): string | undefined {
  if (part.type === 'redacted_reasoning') return `${REDACTED_TAG}${part.data}`;
  return part.signature === undefined ? undefined : `${SIGNATURE_TAG}${part.signature}`;
}

/**
 * The internal part of a reasoning input item: its text with the signature its `encrypted_content`
 * carries, or the redacted reasoning it carries; undefined when the item holds nothing to send.
 */
export function reasoningPartOf(text: string, encryptedContent: unknown): ReasoningPart | undefined {
  const carried = typeof encryptedContent === 'string' ? encryptedContent : '';
  if (carried.startsWith(REDACTED_TAG)) return { type: 'redacted_reasoning', data: carried.slice(REDACTED_TAG.length) };
  const signature = carried.startsWith(SIGNATURE_TAG) ? carried.slice(SIGNATURE_TAG.length) : '';
  if (signature !== '') return { type: 'reasoning', text, signature };
  return text === '' ? undefined : { type: 'reasoning', text };
}
