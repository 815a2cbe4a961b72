import { type DirectRoute, literalPath } from '../../direct-routes';
import { authContextOf, authenticate } from '../keys/authenticate';
import type { KeyCache } from '../keys/key-cache';
import { jsonBytes, rawBody } from '../relay/body';
import type { RelayService } from '../relay/service';
import { CompletionCall } from './call';
import { parseCompletionRequest } from './request';

/** `POST /v1/completions` (docs/api.md 2.1), served directly (see direct-routes). */
export function completionsRoute(keys: KeyCache, relay: RelayService, maxBodyMb: number): DirectRoute {
  return {
    method: 'POST',
    label: '/v1/completions',
    match: literalPath('/v1/completions'),
    handlers: [
      authenticate(keys, 'openai'),
      rawBody(maxBodyMb),
      async (req, res) => {
        const raw = jsonBytes(req);
        const body = parseCompletionRequest(raw);
        const call = new CompletionCall(body, raw, req.requestId);
        await relay.relay(req, res, authContextOf(res), call);
      },
    ],
  };
}
