import type { Provider } from '../provider';
import { GEMINI_FACTS } from './call';
import { embeddingsRequest, embeddingsResponse } from './embeddings';
import { disablingReason, errorOf } from './errors';
import { chatRequest } from './request';
import { chatResponse } from './response';
import { GeminiStreamDecoder } from './stream';

/** Channel type 24 (docs/api.md 2.6): chat through translation, embeddings via batchEmbedContents. */
export const geminiProvider: Provider = {
  facts: GEMINI_FACTS,
  chatRequest,
  chatResponse,
  chatStream: () => new GeminiStreamDecoder(),
  embeddings: { request: embeddingsRequest, response: embeddingsResponse },
  errorOf,
  disablingReason,
};
