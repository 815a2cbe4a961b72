import { isStreamedBody, type UpstreamBody, type UpstreamCall, type UpstreamTarget } from '../core/provider';

/**
 * A POST to a channel, under its path prefix: JSON, or a streamed upload with its own content type.
 * `headers` is a fresh object per call (the provider's authentication), completed in place: a
 * spread copy that then grows costs V8 ~1 us.
 */
export function jsonPost(channel: UpstreamTarget, path: string, body: UpstreamBody, headers: Record<string, string>): UpstreamCall {
  if (isStreamedBody(body)) {
    headers['content-type'] = body.contentType;
    if (body.length !== undefined) headers['content-length'] = String(body.length);
  } else {
    headers['content-type'] = 'application/json';
  }
  return { path: `${channel.pathPrefix}${path}`, headers, body };
}
