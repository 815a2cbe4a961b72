import { Router } from 'express';
import { authContextOf, authenticate } from '../keys/authenticate';
import type { KeyCache } from '../keys/key-cache';
import { jsonBytes, rawBody } from '../relay/body';
import type { RelayService } from '../relay/service';
import { GeminiCall } from './call';
import { estimateGenerateContent, GEMINI_METHODS, parseGenerateContentRequest, parseTarget } from './request';

/**
 * Gemini native operations (CONTRACT 2.3) under `/v1beta/models/...` and, as the Google GenAI SDK
 * calls them by default, `/v1/models/...`.
 */
export function geminiRouter(keys: KeyCache, relay: RelayService, maxBodyMb: number): Router {
  const router = Router();
  router.post(['/v1beta/models/:target', '/v1/models/:target'], authenticate(keys, 'google'), rawBody(maxBodyMb), async (req, res) => {
    const { model, method } = parseTarget(String(req.params.target));
    const raw = jsonBytes(req);
    const body = parseGenerateContentRequest(raw);
    const call = new GeminiCall(raw, model, GEMINI_METHODS[method], estimateGenerateContent(body));
    await relay.relay(req, res, authContextOf(res), call);
  });
  return router;
}
