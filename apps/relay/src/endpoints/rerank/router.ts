import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { RerankCall } from './call';
import { parseRerank } from '../../dialects/openai/media-requests';

/** `POST /v1/rerank` (docs/api.md 2.13). */
export function rerankRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/rerank', deps, (raw) => new RerankCall(parseRerank(raw), raw));
}
