import { randomUUID } from 'node:crypto';
import { eventObjectOf, malformedEvent, reportedStreamError } from '../../features/relay/event-stream';
import type { SseEvent } from '../../core/provider';
import type { ChatStreamEvent } from '../../core/chat';
import type { ChatStreamDecoder } from '../../core/provider';
import { nowSeconds } from '../../core/time';
import { candidatesOf, finishReasonOf, generatedCallId, type OutputPiece, promptBlocked, responseIdOf } from './output';
import { usageOf } from './usage';

/**
 * `streamGenerateContent?alt=sse`: every event is a partial GenerateContentResponse. Function calls
 * arrive whole, so each becomes one `tool_call` with all its arguments. Gemini ends a stream by
 * closing it (there is no `[DONE]`), so `done` stays false; its answer is complete at the chunk
 * that carries a finishReason (or says the prompt was blocked).
 */
export class GeminiStreamDecoder implements ChatStreamDecoder {
  readonly done = false;
  complete = false;
  private id: string | undefined;
  private calls = 0;
  /** Tool calls so far per choice: the next one's index, and whether the choice ends in tool_calls. */
  private readonly toolCalls = new Map<number, number>();

  decode(event: SseEvent): ChatStreamEvent[] {
    if (event.data === null) return [];
    const chunk = eventObjectOf(event.data);
    if (chunk.error !== undefined && chunk.error !== null) throw reportedStreamError(chunk.error);
    const candidates = candidatesOf(chunk);
    if (!candidates) throw malformedEvent();

    const events: ChatStreamEvent[] = [];
    const id = this.id ?? responseIdOf(chunk) ?? randomUUID();
    if (this.id === undefined) {
      this.id = id;
      events.push({ type: 'start', id, created: nowSeconds() });
    }
    for (const { choice, pieces, finishReason } of candidates) {
      for (const piece of pieces) events.push(this.eventOf(piece, choice, id));
      if (typeof finishReason === 'string') {
        this.complete = true;
        const calledTool = (this.toolCalls.get(choice) ?? 0) > 0;
        events.push({ type: 'finish', choice, reason: finishReasonOf(finishReason, calledTool) });
      }
    }
    if (candidates.length === 0 && promptBlocked(chunk)) {
      this.complete = true;
      events.push({ type: 'finish', choice: 0, reason: 'content_filter' });
    }
    const usage = usageOf(chunk.usageMetadata);
    if (usage) events.push({ type: 'usage', usage });
    return events;
  }

  /** `responseId` names the calls Gemini gave no id. */
  private eventOf(piece: OutputPiece, choice: number, responseId: string): ChatStreamEvent {
    switch (piece.type) {
      case 'reasoning':
        return { type: 'reasoning', choice, text: piece.text };
      case 'signature':
        return { type: 'reasoning_signature', choice, signature: piece.signature };
      case 'text':
        return { type: 'text', choice, text: piece.text };
      case 'call': {
        const index = this.toolCalls.get(choice) ?? 0;
        this.toolCalls.set(choice, index + 1);
        const id = piece.id ?? generatedCallId(responseId, this.calls++);
        return { type: 'tool_call', choice, index, id, name: piece.name, arguments: piece.arguments };
      }
    }
  }
}
