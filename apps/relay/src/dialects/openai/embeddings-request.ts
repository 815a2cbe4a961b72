import { parseOrThrow } from '@modelgate/http';
import { promptTokensOf } from './completion-request';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTextTokens, estimateTextTokens } from '../../features/relay/tokens';
import type { EmbeddingRequest } from '../../core/chat';
import { type EmbeddingsBody, embeddingsSchema } from '@modelgate/schemas/relay';

export type { EmbeddingsBody } from '@modelgate/schemas/relay';

/** Parses the raw body once; only `model` is stored, so only it is refused with a NUL. */
export function parseEmbeddingsRequest(raw: Buffer): EmbeddingsBody {
  const body = parseJsonObject(raw);
  parseOrThrow(embeddingsSchema, body, { storedFields: ['model'] });
  return body as EmbeddingsBody;
}

function isTokenIds(input: string[] | number[] | number[][]): input is number[] {
  return typeof input[0] === 'number';
}

/** The internal form: one input per embedding wanted (a lone string or token array is one). */
export function embeddingRequestOf(body: EmbeddingsBody): EmbeddingRequest {
  const input = body.input;
  const inputs = typeof input === 'string' || isTokenIds(input) ? [input] : input;
  return { model: body.model, inputs, dimensions: body.dimensions ?? undefined };
}

/** The reservation's estimate (docs/api.md 2.5): the input only, embeddings generate no completion. */
export function estimateEmbeddings(body: EmbeddingsBody): { promptTokens: number; completionTokens: number } {
  return { promptTokens: promptTokensOf(body.input, estimateTextTokens), completionTokens: 0 };
}

/** The input's tokens as charged when the upstream reports none. */
export function countEmbeddingsPromptTokens(body: EmbeddingsBody): number {
  return promptTokensOf(body.input, countPromptTextTokens);
}
