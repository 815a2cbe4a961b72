import { isJsonObject } from '../../core/json';
import { AppError } from '@modelgate/errors';
import { reportedTokenCount } from '../../features/relay/tokens';
import { UpstreamFailure } from '../../features/upstream/client';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/chat';
import type { UpstreamCall, UpstreamTarget } from '../../core/provider';
import { geminiCall } from './call';

/** `batchEmbedContents`: one request per input, in input order (docs/api.md 2.8). */
export function embeddingsRequest(channel: UpstreamTarget, upstreamModel: string, request: EmbeddingRequest): UpstreamCall {
  const requests = request.inputs.map((input) => {
    if (typeof input !== 'string') {
      throw new AppError('invalid_request', 'input: Gemini embeddings take text, not token ids', { param: 'input' });
    }
    return {
      model: `models/${upstreamModel}`,
      content: { parts: [{ text: input }] },
      ...(request.dimensions !== undefined && { outputDimensionality: request.dimensions }),
    };
  });
  return geminiCall(channel, upstreamModel, 'batchEmbedContents', { requests });
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'number' && Number.isFinite(item));
}

function malformed(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with a malformed embeddings response');
}

/** `{embeddings: [{values}]}`; Gemini reports prompt tokens only sometimes (`usageMetadata`). */
export function embeddingsResponse(body: unknown): EmbeddingResponse {
  if (!isJsonObject(body) || !Array.isArray(body.embeddings)) throw malformed();
  const vectors = body.embeddings.map((embedding: unknown) => {
    const values = isJsonObject(embedding) ? embedding.values : undefined;
    if (!isVector(values)) throw malformed();
    return values;
  });
  const promptTokens = isJsonObject(body.usageMetadata) ? reportedTokenCount(body.usageMetadata.promptTokenCount) : undefined;
  return { vectors, promptTokens };
}
