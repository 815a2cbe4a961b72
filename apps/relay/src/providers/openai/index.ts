import type { NativeOperation, Provider } from '../../core/provider';
import { chatRequestToOpenAI } from './chat-request';
import { chatResponseFromOpenAI } from './chat-response';
import { OpenAIChatStreamDecoder } from './chat-stream';
import { embeddingsRequestToOpenAI, embeddingsResponseFromOpenAI } from './embeddings';
import { disablingReason, errorOf } from './errors';
import { OPENAI_FACTS, openaiCall } from './upstream';

/** Where each OpenAI operation goes, after the channel's path prefix. */
const NATIVE_PATHS: Partial<Record<NativeOperation, string>> = {
  completions: '/v1/completions',
  chat: '/v1/chat/completions',
  embeddings: '/v1/embeddings',
  responses: '/v1/responses',
  images: '/v1/images/generations',
  image_edits: '/v1/images/edits',
  speech: '/v1/audio/speech',
  transcriptions: '/v1/audio/transcriptions',
  translations: '/v1/audio/translations',
  moderations: '/v1/moderations',
  rerank: '/v1/rerank',
};

/**
 * Channel type 1, OpenAI-compatible (docs/api.md 2.6-2.10, 2.13): OpenAI's operations (and Jina /
 * Cohere rerank) pass through;
 * Responses is translated to chat when the channel's `settings.responses` is `chat` (servers that
 * only have chat completions), as are Messages calls.
 */
export const openaiProvider: Provider = {
  facts: OPENAI_FACTS,
  native(operation, channel, upstreamModel) {
    const path = NATIVE_PATHS[operation];
    if (path === undefined || (operation === 'responses' && channel.settings.responses === 'chat')) return undefined;
    return (client) => openaiCall(channel, path, client.bodyFor(upstreamModel));
  },
  chat: (channel, upstreamModel) => ({
    request: (request) => openaiCall(channel, '/v1/chat/completions', JSON.stringify(chatRequestToOpenAI(request, upstreamModel))),
    response: chatResponseFromOpenAI,
    stream: () => new OpenAIChatStreamDecoder(),
  }),
  embeddings: { request: embeddingsRequestToOpenAI, response: embeddingsResponseFromOpenAI },
  errorOf,
  disablingReason,
};
