import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { ChatWire, Provider, UpstreamTarget } from '../../core/provider';
import { authorizeBedrock, forgetBedrockChannels } from './auth';
import { bedrockCall } from './call';
import { converseRequestOf } from './converse-request';
import { converseResponseOf } from './converse-response';
import { ConverseStreamDecoder } from './converse-stream';
import { bedrockDisablingReason, bedrockErrorOf } from './errors';
import { converseStreamFraming } from './event-stream';
import { invokeChat, invokeMessages, isAnthropicModel } from './invoke';

/** Chat through Converse, the API every other Bedrock model speaks. */
function converseChat(channel: UpstreamTarget, upstreamModel: string): ChatWire {
  return {
    request: (request) => {
      const body = JSON.stringify(converseRequestOf(upstreamModel, request));
      return request.stream
        ? bedrockCall(channel, upstreamModel, 'converse-stream', body, converseStreamFraming)
        : bedrockCall(channel, upstreamModel, 'converse', body, undefined);
    },
    response: converseResponseOf,
    stream: () => new ConverseStreamDecoder(),
  };
}

/**
 * Channel type 33 (docs/api.md 2.12): Anthropic's models through InvokeModel, with Anthropic's
 * Messages body, so `/v1/messages` passes through (count_tokens is answered by the relay); every
 * other model through Converse. Chat, Messages and Responses are served for all of them, through
 * the internal form where the dialects differ. Requests are signed (SigV4) or carry an API key.
 */
export const bedrockProvider: Provider = {
  facts: CHANNEL_TYPES[CHANNEL_TYPE.bedrock],
  native(operation, channel, upstreamModel) {
    return operation === 'messages' && isAnthropicModel(upstreamModel) ? invokeMessages(channel, upstreamModel) : undefined;
  },
  chat: (channel, upstreamModel) => (isAnthropicModel(upstreamModel) ? invokeChat(channel, upstreamModel) : converseChat(channel, upstreamModel)),
  authorize: authorizeBedrock,
  forgetChannels: forgetBedrockChannels,
  errorOf: bedrockErrorOf,
  disablingReason: bedrockDisablingReason,
};
