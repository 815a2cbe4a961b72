import { type DirectRoute, literalPath } from '../direct-routes';
import { authContextOf, authenticate } from '../features/keys/authenticate';
import type { KeyCache } from '../features/keys/key-cache';
import { jsonBytes, rawBody } from '../features/relay/body';
import type { RelayCall } from '../features/relay/relay-call';
import type { RelayService } from '../features/relay/service';

export interface RelayRouteDeps {
  keys: KeyCache;
  relay: RelayService;
  maxBodyMb: number;
}

/**
 * An OpenAI-dialect relay surface at a fixed path, served directly (see direct-routes): key first,
 * then the JSON body, then the call through the relay pipeline (docs/api.md 1.3 order).
 */
export function openAIRelayRoute(
  path: string,
  { keys, relay, maxBodyMb }: RelayRouteDeps,
  callOf: (raw: Buffer, requestId: string) => RelayCall,
): DirectRoute {
  return {
    method: 'POST',
    label: path,
    match: literalPath(path),
    handlers: [
      authenticate(keys, 'openai'),
      rawBody(maxBodyMb),
      async (req, res) => {
        const raw = jsonBytes(req);
        await relay.relay(req, res, authContextOf(res), callOf(raw, req.requestId));
      },
    ],
  };
}
