import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { UpstreamBody, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';

export const GEMINI_FACTS = CHANNEL_TYPES[CHANNEL_TYPE.gemini];

/** `/v1beta/models/{model}:{method}`, the method with its query string where it needs one. */
export function geminiMethodPath(upstreamModel: string, method: string): string {
  return `/v1beta/models/${encodeURIComponent(upstreamModel)}:${method}`;
}

/** The generateContent method of a whole or a streamed answer (SSE, as every relayed stream is). */
export function generateContentMethod(stream: boolean): string {
  return stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

/** `POST {prefix}/v1beta/models/{model}:{method}` with the channel's key and a JSON body. */
export function geminiCall(channel: UpstreamTarget, upstreamModel: string, method: string, body: unknown): UpstreamCall {
  return geminiPost(channel, geminiMethodPath(upstreamModel, method), JSON.stringify(body));
}

/** A POST to a Gemini channel, its key in `x-goog-api-key`. */
export function geminiPost(channel: UpstreamTarget, path: string, body: UpstreamBody): UpstreamCall {
  return jsonPost(channel, path, body, { 'x-goog-api-key': channel.key });
}
