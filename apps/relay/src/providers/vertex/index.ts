import type { Provider } from '../../core/provider';
import { messagesRequestOf } from '../anthropic/request';
import { chatResponseOf } from '../anthropic/response';
import { anthropicStreamDecoder } from '../anthropic/stream';
import { generateContentMethod } from '../gemini/call';
import { generateImagesBody, imagesResponse } from '../gemini/images';
import { generateContentBody } from '../gemini/request';
import { chatResponse } from '../gemini/response';
import { GeminiStreamDecoder } from '../gemini/stream';
import { AccessTokens } from './access-tokens';
import { CLAUDE_SURFACES, isClaudeModel, rawPredictBody, rawPredictMethod, VERTEX_FACTS, vertexPost } from './call';
import { disablingReason, errorOf } from './errors';

/**
 * Channel type 41, Google Vertex AI (docs/api.md 2.12), authenticated with access tokens from
 * `tokens`. Gemini models speak Gemini: generateContent passes through byte for byte, the rest is
 * translated (image generation too, docs/api.md 2.13). Claude models (`claude-*`) speak
 * Anthropic's Messages API through rawPredict: /v1/messages passes through (only the body's `model`
 * and `anthropic_version` change), the rest is translated; they have no generateContent and no images.
 */
export function createVertexProvider(tokens: AccessTokens): Provider {
  return {
    facts: VERTEX_FACTS,
    surfacesFor: (_channel, upstreamModel) => (isClaudeModel(upstreamModel) ? CLAUDE_SURFACES : VERTEX_FACTS.surfaces),
    native(operation, channel, upstreamModel) {
      if (isClaudeModel(upstreamModel)) {
        if (operation !== 'messages') return undefined;
        return (client) => {
          const method = rawPredictMethod(client.stream);
          const call = vertexPost(channel, tokens.accountOf(channel), 'anthropic', upstreamModel, method, rawPredictBody(client.json));
          if (client.anthropicBeta) call.headers['anthropic-beta'] = client.anthropicBeta;
          return call;
        };
      }
      if (operation !== 'gemini') return undefined;
      return (client) => {
        const method = generateContentMethod(client.stream);
        return vertexPost(channel, tokens.accountOf(channel), 'google', upstreamModel, method, client.bodyFor(upstreamModel));
      };
    },
    chat(channel, upstreamModel) {
      if (isClaudeModel(upstreamModel)) {
        return {
          request: (request) => {
            const body = rawPredictBody(messagesRequestOf(upstreamModel, request));
            return vertexPost(channel, tokens.accountOf(channel), 'anthropic', upstreamModel, rawPredictMethod(request.stream), body);
          },
          response: chatResponseOf,
          stream: anthropicStreamDecoder,
        };
      }
      return {
        request: (request) => {
          const body = JSON.stringify(generateContentBody(request));
          return vertexPost(channel, tokens.accountOf(channel), 'google', upstreamModel, generateContentMethod(request.stream), body);
        },
        response: chatResponse,
        stream: () => new GeminiStreamDecoder(),
      };
    },
    // Claude models serve no images (CLAUDE_SURFACES): routing never asks them.
    images: {
      request: (channel, upstreamModel, request) => {
        const body = JSON.stringify(generateImagesBody(request));
        return vertexPost(channel, tokens.accountOf(channel), 'google', upstreamModel, generateContentMethod(false), body);
      },
      response: imagesResponse,
    },
    async authorize(channel, call) {
      call.headers.authorization = await tokens.authorization(channel);
    },
    credentialRejected: (channel, call) => tokens.forget(channel, call.headers.authorization),
    forgetChannels: (loaded) => tokens.forgetChannels(loaded),
    errorOf,
    disablingReason,
  };
}

export const vertexProvider: Provider = createVertexProvider(new AccessTokens());
