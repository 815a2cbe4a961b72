import { decodeParam, type DirectRoute } from '../../direct-routes';
import { authContextOf, authenticate } from '../keys/authenticate';
import type { KeyCache } from '../keys/key-cache';
import { jsonBytes, rawBody } from '../relay/body';
import type { RelayService } from '../relay/service';
import { GeminiCall } from './call';
import { GEMINI_METHODS, parseGenerateContentRequest, parseTarget } from './request';

/** `/v1beta/models/:target` and `/v1/models/:target` as Express matches them (case-insensitive, optional trailing slash). */
const TARGET_PATH = /^\/(?:v1beta|v1)\/models\/([^/]+)\/?$/i;

/**
 * Gemini native operations (CONTRACT 2.3) under `/v1beta/models/...` and, as the Google GenAI SDK
 * calls them by default, `/v1/models/...`; served directly (see direct-routes).
 */
export function geminiRoute(keys: KeyCache, relay: RelayService, maxBodyMb: number): DirectRoute {
  return {
    method: 'POST',
    path: ['/v1beta/models/:target', '/v1/models/:target'],
    match(path) {
      const found = TARGET_PATH.exec(path);
      return found ? { target: decodeParam(found[1]) } : undefined;
    },
    handlers: [
      authenticate(keys, 'google'),
      rawBody(maxBodyMb),
      async (req, res) => {
        const { model, method } = parseTarget(String(req.params.target));
        const raw = jsonBytes(req);
        const body = parseGenerateContentRequest(raw);
        const call = new GeminiCall(raw, body, model, GEMINI_METHODS[method]);
        await relay.relay(req, res, authContextOf(res), call);
      },
    ],
  };
}
