import { UpstreamFailure } from '../../features/upstream/client';
import { reportedTokenCount } from '../../features/relay/tokens';
import type { EmbeddingRequest, EmbeddingResponse } from '../../core/chat';
import type { UpstreamCall, UpstreamTarget } from '../../core/provider';
import { isJsonObject, objectOf } from '../../core/json';
import { openaiCall } from './upstream';

/** `POST /v1/embeddings` (docs/api.md 2.8); floats are asked for, the default every compatible server has. */
export function embeddingsRequestToOpenAI(channel: UpstreamTarget, upstreamModel: string, request: EmbeddingRequest): UpstreamCall {
  const body: Record<string, unknown> = { model: upstreamModel, input: request.inputs };
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  return openaiCall(channel, '/v1/embeddings', JSON.stringify(body));
}

function malformed(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with malformed embeddings');
}

const FLOAT32_BYTES = 4;

/** A base64 embedding: float32 little-endian values, as OpenAI sends them and its SDK reads them. */
function floatsOfBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % FLOAT32_BYTES !== 0) throw malformed();
  const floats = new Array<number>(bytes.length / FLOAT32_BYTES);
  for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * FLOAT32_BYTES);
  return floats;
}

/** Float32 vectors as OpenAI's `base64` encoding sends them. */
export function base64OfFloats(vector: number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * FLOAT32_BYTES);
  for (const [i, value] of vector.entries()) bytes.writeFloatLE(value, i * FLOAT32_BYTES);
  return bytes.toString('base64');
}

function vectorOf(embedding: unknown): number[] {
  if (typeof embedding === 'string') return floatsOfBase64(embedding);
  if (!Array.isArray(embedding) || !embedding.every((value) => typeof value === 'number')) throw malformed();
  return embedding as number[];
}

/** An OpenAI embeddings answer (float or base64 vectors), vectors in input order. */
export function embeddingsResponseFromOpenAI(body: unknown): EmbeddingResponse {
  if (!isJsonObject(body) || !Array.isArray(body.data)) throw malformed();
  const items = body.data.map((item: unknown, position) => {
    if (!isJsonObject(item)) throw malformed();
    const index = typeof item.index === 'number' && Number.isInteger(item.index) ? item.index : position;
    return { index, vector: vectorOf(item.embedding) };
  });
  items.sort((a, b) => a.index - b.index);
  return { vectors: items.map((item) => item.vector), promptTokens: reportedTokenCount(objectOf(body.usage).prompt_tokens) };
}
