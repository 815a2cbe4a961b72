import { isJsonObject } from '../../core/json';
import { randomUUID } from 'node:crypto';
import { UpstreamFailure } from '../../features/upstream/client';
import type { ChatChoice, ChatResponse, ContentPart } from '../../core/chat';
import { nowSeconds } from '../../core/time';
import { candidatesOf, finishReasonOf, generatedCallId, type OutputPiece, promptBlocked, responseIdOf } from './output';
import { usageOf } from './usage';

function malformed(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with a malformed GenerateContentResponse');
}

/** Appends a piece; a signature closes the reasoning just before it, or stands as empty reasoning. */
function appendPiece(content: ContentPart[], piece: OutputPiece, callId: () => string): void {
  switch (piece.type) {
    case 'reasoning':
      content.push({ type: 'reasoning', text: piece.text });
      break;
    case 'signature': {
      const last = content.at(-1);
      if (last?.type === 'reasoning' && last.signature === undefined) last.signature = piece.signature;
      else content.push({ type: 'reasoning', text: '', signature: piece.signature });
      break;
    }
    case 'text':
      content.push({ type: 'text', text: piece.text });
      break;
    case 'call':
      content.push({ type: 'tool_call', id: piece.id ?? callId(), name: piece.name, arguments: piece.arguments });
      break;
  }
}

/**
 * A `generateContent` answer in the internal form: one choice per candidate. A prompt Gemini
 * blocked (no candidates, `promptFeedback.blockReason`) is one empty choice ending content_filter.
 */
export function chatResponse(body: unknown): ChatResponse {
  if (!isJsonObject(body)) throw malformed();
  const candidates = candidatesOf(body);
  if (!candidates) throw malformed();
  const id = responseIdOf(body) ?? randomUUID();
  let calls = 0;
  const callId = () => generatedCallId(id, calls++);
  const choices: ChatChoice[] = candidates.map(({ choice, pieces, finishReason }) => {
    const content: ContentPart[] = [];
    for (const piece of pieces) appendPiece(content, piece, callId);
    const calledTool = content.some((part) => part.type === 'tool_call');
    return { index: choice, content, finishReason: finishReasonOf(finishReason, calledTool) };
  });
  if (choices.length === 0) {
    choices.push({ index: 0, content: [], finishReason: promptBlocked(body) ? 'content_filter' : 'stop' });
  }
  return { id, created: nowSeconds(), choices, usage: usageOf(body.usageMetadata) };
}
