import { parseOrThrow } from '@modelgate/http';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTextTokens, estimateTextTokens } from '../../features/relay/tokens';
import { type CompletionRequest, completionRequestSchema } from '@modelgate/schemas/relay';

export type { CompletionRequest } from '@modelgate/schemas/relay';

export const DEFAULT_MAX_TOKENS = 4096;

/**
 * Parses the raw body once; the parsed object keeps every field the client sent. Only `model` is
 * stored (on the consume row), so only it is refused with a NUL; the prompt may hold anything.
 */
export function parseCompletionRequest(raw: Buffer): CompletionRequest {
  const body = parseJsonObject(raw);
  parseOrThrow(completionRequestSchema, body, { storedFields: ['model'] });
  return body as CompletionRequest;
}

/**
 * Prompt tokens of a completion prompt or an embeddings input (the same shapes): token-id prompts
 * are exact; text is counted by `countText`.
 */
export function promptTokensOf(prompt: CompletionRequest['prompt'], countText: (text: string) => number): number {
  if (typeof prompt === 'string') return countText(prompt);
  let total = 0;
  for (const item of prompt) {
    if (typeof item === 'string') total += countText(item);
    else if (typeof item === 'number') total += 1;
    else total += item.length;
  }
  return total;
}

/** How many prompts one request carries (each gets `n` completions). */
function promptCount(prompt: CompletionRequest['prompt']): number {
  if (typeof prompt === 'string' || prompt.length === 0) return 1;
  return typeof prompt[0] === 'number' ? 1 : prompt.length;
}

/** The reservation's token estimate (docs/api.md 2.5): prompt + max_tokens (default 4096) per completion. */
export function estimateCompletion(body: CompletionRequest): { promptTokens: number; completionTokens: number } {
  const perCompletion = body.max_tokens ?? DEFAULT_MAX_TOKENS;
  return { promptTokens: promptTokensOf(body.prompt, estimateTextTokens), completionTokens: perCompletion * (body.n ?? 1) * promptCount(body.prompt) };
}

/** The prompt's tokens as charged when the upstream reports none. */
export function countPromptTokens(body: CompletionRequest): number {
  return promptTokensOf(body.prompt, countPromptTextTokens);
}
