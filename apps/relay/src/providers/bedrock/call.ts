import type { StreamFraming, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { jsonPost } from '../upstream-call';

/** The Bedrock runtime operations the relay calls, by their path's last segment. */
export type BedrockAction = 'invoke' | 'invoke-with-response-stream' | 'converse' | 'converse-stream';

/** Characters encodeURIComponent leaves that the AWS SDK encodes in a model id (RFC 3986's reserved sub-delimiters). */
const UNESCAPED_RESERVED = /[!'()*]/g;

/**
 * A model id as one path segment, percent-encoded as the AWS SDK sends it: an inference profile's
 * `:` becomes `%3A`, an ARN's `/` `%2F`. The signature covers this path encoded once more.
 */
function modelSegment(upstreamModel: string): string {
  return encodeURIComponent(upstreamModel).replace(UNESCAPED_RESERVED, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `POST {prefix}/model/{model id}/{action}` with a JSON body; `authorize` adds the credential. */
export function bedrockCall(
  channel: UpstreamTarget,
  upstreamModel: string,
  action: BedrockAction,
  body: string,
  framing: (() => StreamFraming) | undefined,
): UpstreamCall {
  const call = jsonPost(channel, `/model/${modelSegment(upstreamModel)}/${action}`, body, {});
  if (framing) call.framing = framing;
  return call;
}
