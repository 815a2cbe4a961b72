import { decodeParam, type DirectRoute } from '@modelgate/http';
import { authContextOf, authenticate } from '../../features/keys/authenticate';
import { jsonBytes, rawBody } from '../../features/relay/body';
import type { RelayRouteDeps } from '../relay-route';
import { GeminiCall } from './call';
import { GEMINI_METHODS, type GeminiMethod, parseGenerateContentRequest, parseTarget } from '../../dialects/gemini/request';

/** `/v1beta/models/:target` and `/v1/models/:target` as Express matches them (case-insensitive, optional trailing slash). */
const TARGET_PATH = /^\/(?:v1beta|v1)\/models\/([^/]+)\/?$/i;

/** Route labels by API version and operation; any other target (answered 404) is `.../:target`. */
function labelsOf(version: string): Record<GeminiMethod | 'other', string> {
  return {
    generateContent: `${version}/models/:model:generateContent`,
    streamGenerateContent: `${version}/models/:model:streamGenerateContent`,
    other: `${version}/models/:target`,
  };
}
const LABELS = { v1beta: labelsOf('/v1beta'), v1: labelsOf('/v1') };

/** The operation's label, from the API version and the method the target ends with (no allocation). */
function routeLabel(path: string, params: Record<string, string>): string {
  // The path matched TARGET_PATH: `/v1b...` (any case) is v1beta.
  const labels = path[3] === 'b' || path[3] === 'B' ? LABELS.v1beta : LABELS.v1;
  const target = params.target ?? '';
  if (target.endsWith(':generateContent')) return labels.generateContent;
  if (target.endsWith(':streamGenerateContent')) return labels.streamGenerateContent;
  return labels.other;
}

/**
 * Gemini native operations (docs/api.md 2.3) under `/v1beta/models/...` and, as the Google GenAI SDK
 * calls them by default, `/v1/models/...`; served directly (see withFastPath in @modelgate/http).
 */
export function geminiRoute({ keys, keyFailures, relay, maxBodyMb }: RelayRouteDeps): DirectRoute {
  return {
    method: 'POST',
    label: routeLabel,
    match(path) {
      const target = TARGET_PATH.exec(path)?.[1];
      return target === undefined ? undefined : { target: decodeParam(target) };
    },
    handlers: [
      authenticate(keys, keyFailures, 'gemini'),
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
