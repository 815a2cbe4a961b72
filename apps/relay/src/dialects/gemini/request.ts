import { AppError } from '@modelgate/errors';
import { parseOrThrow, rejectNulCharacters } from '@modelgate/http';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTextTokens, estimateTextTokens } from '../../features/relay/tokens';
import { type GenerateContentRequest, generateContentSchema } from '@modelgate/schemas/relay';

export type { GenerateContentRequest } from '@modelgate/schemas/relay';

export const GEMINI_METHODS = { generateContent: false, streamGenerateContent: true } as const;
export type GeminiMethod = keyof typeof GEMINI_METHODS;

/**
 * `gemini-2.5-flash:generateContent` -> model and method; 404 for another method, 400 for a model
 * with a NUL (the model is stored on the consume row).
 */
export function parseTarget(target: string): { model: string; method: GeminiMethod } {
  const colon = target.lastIndexOf(':');
  const method = colon === -1 ? '' : target.slice(colon + 1);
  const model = colon === -1 ? '' : target.slice(0, colon).replace(/^models\//, '');
  if (!model || !Object.hasOwn(GEMINI_METHODS, method)) {
    throw new AppError('not_found', `unsupported operation ${target}`);
  }
  rejectNulCharacters({ model });
  return { model, method: method as GeminiMethod };
}

/** The body is forwarded and never stored: NUL characters in it are the provider's business. */
export function parseGenerateContentRequest(raw: Buffer): GenerateContentRequest {
  const body = parseJsonObject(raw);
  return parseOrThrow(generateContentSchema, body, { storedFields: [] });
}

/** Google's flat price for a non-text part (image, audio, file) in a prompt. */
const TOKENS_PER_MEDIA_PART = 258;

function partsTokens(content: unknown, countText: (text: string) => number): number {
  const parts = (content as { parts?: unknown } | null)?.parts;
  if (!Array.isArray(parts)) return 0;
  let total = 0;
  for (const part of parts) {
    const text = (part as { text?: unknown } | null)?.text;
    total += typeof text === 'string' ? countText(text) : TOKENS_PER_MEDIA_PART;
  }
  return total;
}

export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

type PromptParts = GenerateContentRequest & { systemInstruction?: unknown };

function promptTokensOf(body: PromptParts, countText: (text: string) => number): number {
  let total = partsTokens(body.systemInstruction, countText);
  for (const content of body.contents) total += partsTokens(content, countText);
  return total;
}

/** The prompt's tokens as charged when the upstream reports none. */
export function countPromptTokens(body: PromptParts): number {
  return promptTokensOf(body, countPromptTextTokens);
}

/** The reservation's estimate: prompt parts + maxOutputTokens (default 4096) per candidate. */
export function estimateGenerateContent(body: PromptParts) {
  const promptTokens = promptTokensOf(body, estimateTextTokens);
  const perCandidate = body.generationConfig?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  return { promptTokens, completionTokens: perCandidate * (body.generationConfig?.candidateCount ?? 1) };
}
