import { randomUUID } from 'node:crypto';
import type { ChatResponse, ChatUsage, ContentPart, FinishReason } from '../../core/chat';
import { isJsonObject, objectOf } from '../../core/json';
import { nowSeconds } from '../../core/time';
import { reportedTokenCount, reportedTokenSum } from '../../features/relay/tokens';
import { UpstreamFailure } from '../../features/upstream/client';

/** Converse's stop reasons in internal terms (docs/api.md 2.6); a reason added later maps to `stop`. */
const FINISH_REASONS = new Map<string, FinishReason>([
  ['end_turn', 'stop'],
  ['stop_sequence', 'stop'],
  ['max_tokens', 'length'],
  ['model_context_window_exceeded', 'length'],
  ['tool_use', 'tool_calls'],
  ['content_filtered', 'content_filter'],
  ['guardrail_intervened', 'content_filter'],
]);

export function converseFinishReason(stopReason: unknown): FinishReason {
  return (typeof stopReason === 'string' ? FINISH_REASONS.get(stopReason) : undefined) ?? 'stop';
}

/**
 * Converse's `usage` as billed (docs/api.md 2.6): `inputTokens` leaves out the prompt tokens read
 * from and written to the cache, which are reported apart; our prompt tokens hold all three, each
 * once. Reasoning is billed inside `outputTokens` and not reported apart. Undefined when the
 * counts are missing or not believable (the relay then counts itself).
 */
export function converseUsageOf(usage: unknown): ChatUsage | undefined {
  if (!isJsonObject(usage)) return undefined;
  const input = reportedTokenCount(usage.inputTokens);
  const completionTokens = reportedTokenCount(usage.outputTokens);
  const cachedTokens = reportedTokenSum(usage.cacheReadInputTokens);
  const cacheWriteTokens = reportedTokenSum(usage.cacheWriteInputTokens);
  if (input === undefined || completionTokens === undefined || cachedTokens === undefined || cacheWriteTokens === undefined) return undefined;
  const promptTokens = reportedTokenSum(input, cachedTokens, cacheWriteTokens);
  return promptTokens === undefined ? undefined : { promptTokens, completionTokens, cachedTokens, cacheWriteTokens, reasoningTokens: 0 };
}

/** Converse answers carry no id: the relay names each answer. */
export function converseAnswerId(): string {
  return randomUUID();
}

function unexpectedBody(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with an unexpected body');
}

/** A whole answer's `reasoningContent` block (its text and signature, or redacted) as an internal part. */
function reasoningPartOf(reasoning: Record<string, unknown>): ContentPart | undefined {
  if (typeof reasoning.redactedContent === 'string') return { type: 'redacted_reasoning', data: reasoning.redactedContent };
  const text = objectOf(reasoning.reasoningText);
  if (typeof text.text !== 'string') return undefined;
  return typeof text.signature === 'string' && text.signature !== ''
    ? { type: 'reasoning', text: text.text, signature: text.signature }
    : { type: 'reasoning', text: text.text };
}

/** One answer block as an internal part; blocks the client has no use for (citations ...) are left out. */
function partOf(block: unknown): ContentPart | undefined {
  if (!isJsonObject(block)) throw unexpectedBody();
  if (typeof block.text === 'string') return { type: 'text', text: block.text };
  if (isJsonObject(block.toolUse)) {
    const { toolUseId, name, input } = block.toolUse;
    if (typeof toolUseId !== 'string' || typeof name !== 'string') throw unexpectedBody();
    return { type: 'tool_call', id: toolUseId, name, arguments: JSON.stringify(input ?? {}) };
  }
  if (isJsonObject(block.reasoningContent)) return reasoningPartOf(block.reasoningContent);
  return undefined;
}

/** A Converse answer (`{output: {message}, stopReason, usage}`) as the internal chat answer: one choice. */
export function converseResponseOf(body: unknown): ChatResponse {
  const message = isJsonObject(body) && isJsonObject(body.output) ? body.output.message : undefined;
  if (!isJsonObject(body) || !isJsonObject(message) || !Array.isArray(message.content)) throw unexpectedBody();
  const content = message.content.flatMap((block) => partOf(block) ?? []);
  return {
    id: converseAnswerId(),
    created: nowSeconds(),
    choices: [{ index: 0, content, finishReason: converseFinishReason(body.stopReason) }],
    usage: converseUsageOf(body.usage),
  };
}
