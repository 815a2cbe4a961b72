import { isJsonObject } from '../../core/json';
import { reportedTokenCount, reportedTokenSum } from '../../features/relay/tokens';
import type { ChatUsage } from '../../core/chat';
import { serverToolCallsOf } from './server-tools';
import type { MessageUsage } from './wire';

/** Anthropic's `usage` (message, `message_start`, `message_delta`): any field may be absent or null. */
export interface AnthropicUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  /** Server tool calls so far (`web_search_requests` ...), docs/api.md 2.14. */
  server_tool_use?: unknown;
}

/**
 * What message_start's usage reports for good: the prompt side. Its `output_tokens` is a
 * placeholder (the answer has not begun); taken as a count, a stream that ends before
 * message_delta would be charged that placeholder instead of what it delivered (docs/api.md 2.5).
 */
export const MESSAGE_START_USAGE = ['input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;
/** message_delta's usage: the output and the server tool calls so far, and the prompt side again where it is reported. */
export const MESSAGE_DELTA_USAGE = [...MESSAGE_START_USAGE, 'output_tokens', 'server_tool_use'] as const;

/** A stream's usage fields are cumulative: the latest reported value of each of `fields` is kept. */
export function mergeReportedUsage(usage: AnthropicUsage, reported: Record<string, unknown>, fields: readonly (keyof AnthropicUsage)[]): void {
  for (const field of fields) {
    const value = reported[field];
    if (value !== undefined && value !== null) usage[field] = value;
  }
}

type PromptUsage = Pick<ChatUsage, 'promptTokens' | 'cachedTokens' | 'cacheWriteTokens'>;

/** An optional cache count: absent or null is 0, an unbelievable one undefined. */
function cacheCount(value: unknown): number | undefined {
  return value === undefined || value === null ? 0 : reportedTokenCount(value);
}

/**
 * The prompt side (docs/api.md 2.6): Anthropic's `input_tokens` excludes cache reads and writes,
 * our prompt tokens include both. Undefined when `input_tokens` is missing or a count is not
 * believable.
 */
function promptUsageOf(usage: AnthropicUsage): PromptUsage | undefined {
  const input = reportedTokenCount(usage.input_tokens);
  const cachedTokens = cacheCount(usage.cache_read_input_tokens);
  const cacheWriteTokens = cacheCount(usage.cache_creation_input_tokens);
  if (input === undefined || cachedTokens === undefined || cacheWriteTokens === undefined) return undefined;
  const promptTokens = reportedTokenSum(input, cachedTokens, cacheWriteTokens);
  return promptTokens === undefined ? undefined : { promptTokens, cachedTokens, cacheWriteTokens };
}

/**
 * A whole answer's usage, or undefined when Anthropic's is missing or not believable (the relay
 * then counts itself). Thinking is billed inside `output_tokens` and not reported apart.
 */
export function chatUsageOf(usage: unknown): ChatUsage | undefined {
  if (!isJsonObject(usage)) return undefined;
  const prompt = promptUsageOf(usage);
  const completionTokens = reportedTokenCount(usage.output_tokens);
  if (!prompt || completionTokens === undefined) return undefined;
  const chat: ChatUsage = { promptTokens: prompt.promptTokens, cachedTokens: prompt.cachedTokens, cacheWriteTokens: prompt.cacheWriteTokens, completionTokens, reasoningTokens: 0 };
  const serverToolCalls = serverToolCallsOf(usage);
  if (serverToolCalls) chat.serverToolCalls = serverToolCalls;
  return chat;
}

/** A stream's usage so far: the prompt side once it is known, the output so far once reported. */
export function partialUsageOf(usage: AnthropicUsage): Partial<ChatUsage> {
  const completionTokens = reportedTokenCount(usage.output_tokens);
  // A fresh object, completed in place (a spread copy that then grows is slow in V8).
  const partial: Partial<ChatUsage> = promptUsageOf(usage) ?? {};
  if (completionTokens !== undefined) partial.completionTokens = completionTokens;
  partial.reasoningTokens = 0;
  const serverToolCalls = serverToolCallsOf(usage);
  if (serverToolCalls) partial.serverToolCalls = serverToolCalls;
  return partial;
}

/**
 * Internal counts as Anthropic's `usage` (docs/api.md 2.6, 2.9): `input_tokens` is the prompt
 * without cache reads and writes, which Anthropic reports apart.
 */
export function anthropicUsageOf(usage: ChatUsage): MessageUsage {
  return {
    input_tokens: Math.max(0, usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens),
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedTokens,
    output_tokens: usage.completionTokens,
  };
}
