import type { Provider } from '../../core/provider';
import { GEMINI_FACTS, generateContentMethod, geminiMethodPath, geminiPost } from './call';
import { embeddingsRequest, embeddingsResponse } from './embeddings';
import { disablingReason, errorOf } from './errors';
import { imagesRequest, imagesResponse } from './images';
import { chatRequest } from './request';
import { chatResponse } from './response';
import { GeminiStreamDecoder } from './stream';

/**
 * Channel type 24 (docs/api.md 2.3, 2.6): generateContent passes through (the client's body
 * byte-for-byte, TTS `speechConfig` included; only the channel's key is added); chat is translated,
 * embeddings go through batchEmbedContents, image generation through generateContent with image
 * output (docs/api.md 2.13).
 */
export const geminiProvider: Provider = {
  facts: GEMINI_FACTS,
  native(operation, channel, upstreamModel) {
    if (operation !== 'gemini') return undefined;
    return (client) => geminiPost(channel, geminiMethodPath(upstreamModel, generateContentMethod(client.stream)), client.bodyFor(upstreamModel));
  },
  chat: (channel, upstreamModel) => ({
    request: (request) => chatRequest(channel, upstreamModel, request),
    response: chatResponse,
    stream: () => new GeminiStreamDecoder(),
  }),
  embeddings: { request: embeddingsRequest, response: embeddingsResponse },
  images: { request: imagesRequest, response: imagesResponse },
  errorOf,
  disablingReason,
};
