import type { EmbeddingResponse } from '../../core/chat';
import { base64OfFloats } from '../../providers/openai/embeddings';

/**
 * The OpenAI embeddings answer (docs/api.md 2.8) for a client: `model` is the client's name,
 * base64 vectors are float32 little-endian bytes (what the OpenAI SDK decodes).
 */
export function embeddingsResponseToOpenAI(
  response: EmbeddingResponse,
  model: string,
  encodingFormat: 'float' | 'base64',
  promptTokens: number,
): Record<string, unknown> {
  return {
    object: 'list',
    data: response.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encodingFormat === 'base64' ? base64OfFloats(vector) : vector,
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
