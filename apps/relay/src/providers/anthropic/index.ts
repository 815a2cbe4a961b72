import { ANTHROPIC_VERSION, CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { Provider, UpstreamBody, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';
import { anthropicDisablingReason, anthropicErrorOf } from './errors';
import { messagesRequestOf } from './request';
import { chatResponseOf } from './response';
import { anthropicStreamDecoder } from './stream';

const facts = CHANNEL_TYPES[CHANNEL_TYPE.anthropic];

/** A POST to an Anthropic channel: its key, and the Messages API version the relay speaks. */
function anthropicPost(channel: UpstreamTarget, path: string, body: UpstreamBody): UpstreamCall {
  return jsonPost(channel, path, body, { 'x-api-key': channel.key, 'anthropic-version': ANTHROPIC_VERSION });
}

const NATIVE_PATHS = { messages: '/v1/messages', count_tokens: '/v1/messages/count_tokens' } as const;

/**
 * Channel type 14: Anthropic's Messages API (docs/api.md 2.6, 2.9). Messages and count_tokens pass
 * through with the client's `anthropic-version` (else the relay's) and `anthropic-beta`, so the
 * channel answers the API the client speaks; chat is translated. It has no embeddings.
 */
export const anthropicProvider: Provider = {
  facts,
  native(operation, channel, upstreamModel) {
    if (operation !== 'messages' && operation !== 'count_tokens') return undefined;
    const path = NATIVE_PATHS[operation];
    return (client) => {
      const call = anthropicPost(channel, path, client.bodyFor(upstreamModel));
      if (client.anthropicVersion) call.headers['anthropic-version'] = client.anthropicVersion;
      if (client.anthropicBeta) call.headers['anthropic-beta'] = client.anthropicBeta;
      return call;
    };
  },
  chat: (channel: UpstreamTarget, upstreamModel: string) => ({
    request: (request) => anthropicPost(channel, '/v1/messages', JSON.stringify(messagesRequestOf(upstreamModel, request))),
    response: chatResponseOf,
    stream: anthropicStreamDecoder,
  }),
  errorOf: anthropicErrorOf,
  disablingReason: anthropicDisablingReason,
};
