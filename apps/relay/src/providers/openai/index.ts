import type { Provider } from '../provider';
import { chatRequestToOpenAI } from './chat-request';
import { chatResponseFromOpenAI } from './chat-response';
import { OpenAIChatStreamDecoder } from './chat-stream';
import { embeddingsRequestToOpenAI, embeddingsResponseFromOpenAI } from './embeddings';
import { disablingReason, errorOf } from './errors';
import { OPENAI_FACTS, openaiCall } from './upstream';

/** Channel type 1, OpenAI-compatible (docs/api.md 2.6, 2.7, 2.8). */
export const openaiProvider: Provider = {
  facts: OPENAI_FACTS,
  chatRequest: (channel, upstreamModel, request) => openaiCall(channel, '/v1/chat/completions', chatRequestToOpenAI(request, upstreamModel)),
  chatResponse: chatResponseFromOpenAI,
  chatStream: () => new OpenAIChatStreamDecoder(),
  embeddings: { request: embeddingsRequestToOpenAI, response: embeddingsResponseFromOpenAI },
  errorOf,
  disablingReason,
};
