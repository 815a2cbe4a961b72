import type { ChannelTypeFacts } from '@modelgate/schemas';
import type { UpstreamCall, UpstreamTarget } from './provider';

/** A JSON POST to a channel: under its path prefix, with its type's authentication headers. */
export function jsonPost(facts: ChannelTypeFacts, channel: UpstreamTarget, path: string, body: Buffer | string): UpstreamCall {
  return {
    path: `${channel.pathPrefix}${path}`,
    headers: { ...facts.authHeaders(channel.key), 'content-type': 'application/json' },
    body,
  };
}
