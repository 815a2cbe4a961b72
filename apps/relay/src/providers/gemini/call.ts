import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { UpstreamCall, UpstreamTarget } from '../provider';

export const GEMINI_FACTS = CHANNEL_TYPES[CHANNEL_TYPE.gemini];

/** `POST {prefix}/v1beta/models/{model}:{method}` with the channel's key and a JSON body. */
export function geminiCall(channel: UpstreamTarget, upstreamModel: string, method: string, body: unknown): UpstreamCall {
  return {
    path: `${channel.pathPrefix}/v1beta/models/${encodeURIComponent(upstreamModel)}:${method}`,
    headers: { ...GEMINI_FACTS.authHeaders(channel.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}
