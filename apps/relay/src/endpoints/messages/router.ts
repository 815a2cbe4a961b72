import type { DirectRoute } from '@modelgate/http';
import { authContextOf } from '../../features/keys/authenticate';
import { relayRoute, type RelayRouteDeps } from '../relay-route';
import { MessagesCall } from './call';
import { CountTokensCall } from './count-tokens';
import { anthropicClientHeadersOf } from '../../dialects/anthropic/pass-through';
import { parseCountTokensRequest, parseMessagesRequest } from '../../dialects/anthropic/request';

/** `POST /v1/messages` (docs/api.md 2.9): the key in `x-api-key` or `Authorization: Bearer`. */
export function messagesRoute(deps: RelayRouteDeps): DirectRoute {
  return relayRoute('/v1/messages', 'anthropic', deps, (req, res, raw) =>
    deps.relay.relay(req, res, authContextOf(res), new MessagesCall(parseMessagesRequest(raw), raw, req.requestId, anthropicClientHeadersOf(req.headers))),
  );
}

/** `POST /v1/messages/count_tokens` (docs/api.md 2.9): checked and routed as `/v1/messages`, not charged. */
export function countTokensRoute(deps: RelayRouteDeps): DirectRoute {
  return relayRoute('/v1/messages/count_tokens', 'anthropic', deps, (req, res, raw) =>
    deps.relay.relayUncharged(req, res, authContextOf(res), new CountTokensCall(parseCountTokensRequest(raw), raw, anthropicClientHeadersOf(req.headers))),
  );
}
