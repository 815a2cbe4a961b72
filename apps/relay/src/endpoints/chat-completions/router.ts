import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { ChatCompletionCall } from './call';
import { parseChatCompletionRequest } from '../../dialects/openai/chat-request';

/** `POST /v1/chat/completions` (docs/api.md 2.7). */
export function chatCompletionsRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/chat/completions', deps, (raw, requestId) => new ChatCompletionCall(parseChatCompletionRequest(raw), raw, requestId));
}
