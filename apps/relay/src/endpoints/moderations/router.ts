import type { DirectRoute } from '@modelgate/http';
import { openAIRelayRoute, type RelayRouteDeps } from '../relay-route';
import { ModerationCall } from './call';
import { parseModeration } from '../../dialects/openai/media-requests';

/** `POST /v1/moderations` (docs/api.md 2.13). */
export function moderationsRoute(deps: RelayRouteDeps): DirectRoute {
  return openAIRelayRoute('/v1/moderations', deps, (raw) => new ModerationCall(parseModeration(raw), raw));
}
