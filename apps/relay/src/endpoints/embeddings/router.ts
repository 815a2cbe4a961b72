import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { EmbeddingsCall } from './call';
import { parseEmbeddingsRequest } from '../../dialects/openai/embeddings-request';

/** `POST /v1/embeddings` (docs/api.md 2.8). */
export function embeddingsRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/embeddings', deps, (raw) => new EmbeddingsCall(parseEmbeddingsRequest(raw), raw));
}
