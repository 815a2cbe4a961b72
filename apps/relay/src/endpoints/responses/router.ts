import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { ResponsesCall } from './call';
import { parseResponsesRequest } from '../../dialects/responses/request';

/** `POST /v1/responses` (docs/api.md 2.10). */
export function responsesRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/responses', deps, (raw, requestId) => new ResponsesCall(parseResponsesRequest(raw), raw, requestId));
}
