import type { ChatWire, ClientRequest, UpstreamCall, UpstreamTarget } from '../../core/provider';
import { cloudMessagesBody } from '../anthropic/cloud-body';
import { messagesRequestOf } from '../anthropic/request';
import { chatResponseOf } from '../anthropic/response';
import { anthropicStreamDecoder } from '../anthropic/stream';
import { bedrockCall } from './call';
import { invokeStreamFraming } from './event-stream';

/** The Messages API version Bedrock takes in the body, in place of the `anthropic-version` header. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Anthropic's models on Bedrock, inference profiles (`us.`, `eu.`, `global.` ...) included. */
export function isAnthropicModel(upstreamModel: string): boolean {
  return upstreamModel.includes('anthropic.');
}

/** InvokeModel, or InvokeModelWithResponseStream (AWS event-stream frames of Anthropic's events). */
function invokeCall(channel: UpstreamTarget, upstreamModel: string, stream: boolean, body: Record<string, unknown>): UpstreamCall {
  return stream
    ? bedrockCall(channel, upstreamModel, 'invoke-with-response-stream', JSON.stringify(body), invokeStreamFraming)
    : bedrockCall(channel, upstreamModel, 'invoke', JSON.stringify(body), undefined);
}

/**
 * The Anthropic betas InvokeModel accepts (AWS's list for Claude on Bedrock). Bedrock answers any
 * other flag with 400 "invalid beta flag", and clients such as Claude Code send several it does
 * not know (`claude-code-20250219`, `mcp-servers-...`): those are dropped (docs/api.md 2.6).
 */
const BEDROCK_BETAS: ReadonlySet<string> = new Set([
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'fine-grained-tool-streaming-2025-05-14',
  'output-128k-2025-02-19',
  'dev-full-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
]);

/**
 * A Messages client's body as InvokeModel takes it (docs/api.md 2.12): `stream` is the operation,
 * and the client's `anthropic-beta` flags Bedrock knows go in the body as `anthropic_beta`.
 */
function invokeBodyOf(client: ClientRequest): Record<string, unknown> {
  const body = cloudMessagesBody(BEDROCK_ANTHROPIC_VERSION, client.json, false);
  const betas = client.anthropicBeta?.split(',').map((beta) => beta.trim()).filter((beta) => BEDROCK_BETAS.has(beta));
  if (betas?.length) body.anthropic_beta = betas;
  return body;
}

/** `/v1/messages` on an Anthropic model: the client's request, re-addressed. */
export function invokeMessages(channel: UpstreamTarget, upstreamModel: string): (client: ClientRequest) => UpstreamCall {
  return (client) => invokeCall(channel, upstreamModel, client.stream, invokeBodyOf(client));
}

/** Chat through InvokeModel: Anthropic's answers and events, read by the Anthropic provider. */
export function invokeChat(channel: UpstreamTarget, upstreamModel: string): ChatWire {
  return {
    request: (request) => invokeCall(channel, upstreamModel, request.stream, cloudMessagesBody(BEDROCK_ANTHROPIC_VERSION, messagesRequestOf(upstreamModel, request), false)),
    response: chatResponseOf,
    stream: anthropicStreamDecoder,
  };
}
