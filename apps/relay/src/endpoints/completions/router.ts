import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { CompletionCall } from './call';
import { parseCompletionRequest } from '../../dialects/openai/completion-request';

/** `POST /v1/completions` (docs/api.md 2.1). */
export function completionsRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/completions', deps, (raw, requestId) => new CompletionCall(parseCompletionRequest(raw), raw, requestId));
}
