import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { Provider } from '../provider';
import { jsonPost } from '../upstream-call';
import { anthropicDisablingReason, anthropicErrorOf } from './errors';
import { messagesRequestOf } from './request';
import { chatResponseOf } from './response';
import { anthropicStreamDecoder } from './stream';

const facts = CHANNEL_TYPES[CHANNEL_TYPE.anthropic];

/** Channel type 14: Anthropic's Messages API (docs/api.md 2.6). It has no embeddings. */
export const anthropicProvider: Provider = {
  facts,
  chatRequest: (channel, upstreamModel, request) => jsonPost(facts, channel, '/v1/messages', JSON.stringify(messagesRequestOf(upstreamModel, request))),
  chatResponse: chatResponseOf,
  chatStream: anthropicStreamDecoder,
  errorOf: anthropicErrorOf,
  disablingReason: anthropicDisablingReason,
};
