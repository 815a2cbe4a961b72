import { reportedTokenCount } from '../../features/relay/tokens';
import type { ChatUsage } from '../../core/chat';
import { objectOf, withOtherFields } from '../../core/json';

/** OpenAI `usage` as docs/api.md 2.1 requires it: every count present, details included. */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; text_tokens: number; audio_tokens: number; image_tokens: number };
  completion_tokens_details: { text_tokens: number; audio_tokens: number; reasoning_tokens: number };
  [extra: string]: unknown;
}

/** Unbelievable counts (negative, fractional, beyond MAX_TOKEN_COUNT) are treated as missing. */
const count = reportedTokenCount;

/**
 * Completes an upstream `usage` object: values from the upstream win, missing ones are derived
 * (text = total - audio - image / - audio - reasoning), unknown ones are 0. Without any upstream
 * usage, the fallbacks (our own counts) are used.
 */
export function completeUsage(
  upstream: unknown,
  fallbackPromptTokens: () => number,
  fallbackCompletionTokens: () => number,
): CompletionUsage {
  const usage = objectOf(upstream);
  const promptTokens = count(usage.prompt_tokens) ?? fallbackPromptTokens();
  const completionTokens = count(usage.completion_tokens) ?? fallbackCompletionTokens();
  const promptDetails = objectOf(usage.prompt_tokens_details);
  const completionDetails = objectOf(usage.completion_tokens_details);
  const promptAudio = count(promptDetails.audio_tokens) ?? 0;
  const promptImage = count(promptDetails.image_tokens) ?? 0;
  const completionAudio = count(completionDetails.audio_tokens) ?? 0;
  const reasoning = count(completionDetails.reasoning_tokens) ?? 0;
  return withOtherFields(
    {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: count(usage.total_tokens) ?? promptTokens + completionTokens,
      prompt_tokens_details: withOtherFields(
        {
          cached_tokens: cachedCount(usage) ?? 0,
          text_tokens: count(promptDetails.text_tokens) ?? Math.max(0, promptTokens - promptAudio - promptImage),
          audio_tokens: promptAudio,
          image_tokens: promptImage,
        },
        promptDetails,
      ),
      completion_tokens_details: withOtherFields(
        {
          text_tokens: count(completionDetails.text_tokens) ?? Math.max(0, completionTokens - completionAudio - reasoning),
          audio_tokens: completionAudio,
          reasoning_tokens: reasoning,
        },
        completionDetails,
      ),
    },
    usage,
  );
}

/** Cached prompt tokens: OpenAI's `prompt_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`. */
function cachedCount(usage: Record<string, unknown>): number | undefined {
  return count(objectOf(usage.prompt_tokens_details).cached_tokens) ?? count(usage.prompt_cache_hit_tokens);
}

/** The internal counts of a usage whose totals are known; details larger than their total are cut to it. */
function chatUsageWith(usage: Record<string, unknown>, promptTokens: number, completionTokens: number): ChatUsage {
  const reasoningTokens = count(objectOf(usage.completion_tokens_details).reasoning_tokens) ?? 0;
  return {
    promptTokens,
    completionTokens,
    cachedTokens: Math.min(cachedCount(usage) ?? 0, promptTokens),
    cacheWriteTokens: 0,
    reasoningTokens: Math.min(reasoningTokens, completionTokens),
  };
}

/**
 * An OpenAI `usage` object in the internal form, or undefined when it lacks a believable prompt or
 * completion count (the relay then counts itself).
 */
export function usageFromOpenAI(upstream: unknown): ChatUsage | undefined {
  const usage = objectOf(upstream);
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  return chatUsageWith(usage, promptTokens, completionTokens);
}

/**
 * The full OpenAI `usage` object (docs/api.md 2.1) of internal counts. Cache writes have no
 * OpenAI field: they are in `prompt_tokens`, as docs/api.md 2.6 says.
 */
export function usageToOpenAI(usage: ChatUsage): CompletionUsage {
  const reported = {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
  return completeUsage(reported, () => usage.promptTokens, () => usage.completionTokens);
}

/**
 * The counts a completed `usage` is charged by (docs/api.md 2.11), read by the rules of
 * usageFromOpenAI; OpenAI reports no cache writes.
 */
export function chargedUsageOf(usage: CompletionUsage): ChatUsage {
  return chatUsageWith(usage, usage.prompt_tokens, usage.completion_tokens);
}

/** Text of every choice of a completion (or chunk), for counting when the upstream sent no usage. */
export function choiceTexts(choices: unknown, into: string[]): void {
  if (!Array.isArray(choices)) return;
  for (const choice of choices) {
    const text = (choice as { text?: unknown } | null)?.text;
    if (typeof text === 'string' && text.length > 0) into.push(text);
  }
}
