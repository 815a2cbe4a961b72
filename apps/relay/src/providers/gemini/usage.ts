import { isJsonObject } from '../../core/json';
import { reportedTokenCount, reportedTokenSum } from '../../features/relay/tokens';
import type { ChatUsage } from '../../core/chat';

/**
 * Gemini's `usageMetadata` as billed (docs/api.md 2.6): tool-use prompt tokens are prompt tokens,
 * thoughts are completion (and reasoning) tokens, `cachedContentTokenCount` is the cached share of
 * the prompt. Undefined when the counts are missing or not believable, so the relay counts itself.
 */
export function usageOf(metadata: unknown): ChatUsage | undefined {
  if (!isJsonObject(metadata) || reportedTokenCount(metadata.promptTokenCount) === undefined) return undefined;
  const promptTokens = reportedTokenSum(metadata.promptTokenCount, metadata.toolUsePromptTokenCount);
  const completionTokens = reportedTokenSum(metadata.candidatesTokenCount, metadata.thoughtsTokenCount);
  const cachedTokens = reportedTokenSum(metadata.cachedContentTokenCount);
  const reasoningTokens = reportedTokenSum(metadata.thoughtsTokenCount);
  if (promptTokens === undefined || completionTokens === undefined || cachedTokens === undefined || reasoningTokens === undefined) {
    return undefined;
  }
  if (cachedTokens > promptTokens) return undefined;
  return { promptTokens, completionTokens, cachedTokens, cacheWriteTokens: 0, reasoningTokens };
}
