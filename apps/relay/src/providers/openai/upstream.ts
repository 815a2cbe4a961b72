import { CHANNEL_TYPE, CHANNEL_TYPES } from '@modelgate/schemas';
import type { UpstreamBody, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';

export const OPENAI_FACTS = CHANNEL_TYPES[CHANNEL_TYPE.openai];

/** A JSON POST to an OpenAI-compatible channel: its path prefix, its key as a bearer token. */
export function openaiCall(channel: UpstreamTarget, path: string, body: UpstreamBody): UpstreamCall {
  return jsonPost(channel, path, body, { authorization: `Bearer ${channel.key}` });
}
