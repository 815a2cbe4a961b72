import { isJsonObject } from '../../core/json';
import { UpstreamFailure } from '../../features/upstream/client';
import type { ChatResponse, ContentPart } from '../../core/chat';
import { nowSeconds } from '../../core/time';
import { finishReasonOf } from './stop-reasons';
import { chatUsageOf } from './usage';

function unexpectedBody(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with an unexpected body');
}

/**
 * One answer block as an internal part. Server-tool blocks (web search and its results) are the
 * upstream's own business, not the client's, and are left out.
 */
function partOf(block: unknown): ContentPart | undefined {
  if (!isJsonObject(block)) throw unexpectedBody();
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') throw unexpectedBody();
      return { type: 'text', text: block.text };
    case 'thinking':
      if (typeof block.thinking !== 'string') throw unexpectedBody();
      return {
        type: 'reasoning',
        text: block.thinking,
        ...(typeof block.signature === 'string' && block.signature !== '' ? { signature: block.signature } : {}),
      };
    case 'redacted_thinking':
      if (typeof block.data !== 'string') throw unexpectedBody();
      return { type: 'redacted_reasoning', data: block.data };
    case 'tool_use':
      if (typeof block.id !== 'string' || typeof block.name !== 'string' || !isJsonObject(block.input)) throw unexpectedBody();
      return { type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input) };
    default:
      return undefined;
  }
}

/** A Messages API answer (2xx JSON body) as the internal chat answer: one choice, blocks in order. */
export function chatResponseOf(body: unknown): ChatResponse {
  if (!isJsonObject(body) || body.type !== 'message' || typeof body.id !== 'string' || !Array.isArray(body.content)) {
    throw unexpectedBody();
  }
  const content = body.content.flatMap((block) => partOf(block) ?? []);
  const finishReason = typeof body.stop_reason === 'string' ? finishReasonOf(body.stop_reason) : 'stop';
  return { id: body.id, created: nowSeconds(), choices: [{ index: 0, content, finishReason }], usage: chatUsageOf(body.usage) };
}
