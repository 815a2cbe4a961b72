import type { ChannelTypeFacts } from '@modelgate/schemas';
import type { UpstreamCall, UpstreamTarget } from '../core/provider';

/** A JSON POST to a channel: under its path prefix, with its type's authentication headers. */
export function jsonPost(facts: ChannelTypeFacts, channel: UpstreamTarget, path: string, body: Buffer | string): UpstreamCall {
  // A fresh object per call, so it is completed in place: a spread copy that then grows costs V8 ~1 us.
  const headers = facts.authHeaders(channel.key);
  headers['content-type'] = 'application/json';
  return { path: `${channel.pathPrefix}${path}`, headers, body };
}
