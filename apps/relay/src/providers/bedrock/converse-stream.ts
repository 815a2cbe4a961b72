import type { ChatStreamEvent } from '../../core/chat';
import { isJsonObject } from '../../core/json';
import type { ChatStreamDecoder, SseEvent } from '../../core/provider';
import { nowSeconds } from '../../core/time';
import { eventObjectOf, malformedEvent } from '../../features/relay/event-stream';
import { converseAnswerId, converseFinishReason, converseUsageOf } from './converse-response';

/** Converse answers with one choice. */
const CHOICE = 0;

function blockIndexOf(event: Record<string, unknown>): number {
  const index = event.contentBlockIndex;
  if (typeof index !== 'number') throw malformedEvent();
  return index;
}

/** A text or reasoning piece as an event; an empty piece is none. */
function pieceEvents(type: 'text' | 'reasoning', text: unknown): ChatStreamEvent[] {
  if (typeof text !== 'string') throw malformedEvent();
  return text === '' ? [] : [{ type, choice: CHOICE, text }];
}

/**
 * ConverseStream's events (`messageStart`, `contentBlockStart` / `Delta` / `Stop`, `messageStop`,
 * then `metadata` with the usage), each read into internal events as it arrives. Tool calls are
 * numbered in their order of appearance, as OpenAI numbers them. The answer is whole at
 * `messageStop`; the upstream is done after `metadata`.
 */
export class ConverseStreamDecoder implements ChatStreamDecoder {
  done = false;
  complete = false;
  private started = false;
  private toolCalls = 0;
  private readonly toolIndexByBlock = new Map<number, number>();

  decode(event: SseEvent): ChatStreamEvent[] {
    if (event.data === null) return [];
    const data = eventObjectOf(event.data);
    const events: ChatStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push({ type: 'start', id: converseAnswerId(), created: nowSeconds() });
    }
    switch (event.event) {
      case 'contentBlockStart':
        events.push(...this.blockStart(blockIndexOf(data), data.start));
        break;
      case 'contentBlockDelta':
        if (!isJsonObject(data.delta)) throw malformedEvent();
        events.push(...this.blockDelta(blockIndexOf(data), data.delta));
        break;
      case 'messageStop':
        this.complete = true;
        events.push({ type: 'finish', choice: CHOICE, reason: converseFinishReason(data.stopReason) });
        break;
      case 'metadata': {
        this.done = true;
        const usage = converseUsageOf(data.usage);
        if (usage) events.push({ type: 'usage', usage });
        break;
      }
      default:
        // messageStart, contentBlockStop, and event types added later
        break;
    }
    return events;
  }

  private blockStart(blockIndex: number, start: unknown): ChatStreamEvent[] {
    const toolUse = isJsonObject(start) ? start.toolUse : undefined;
    if (!isJsonObject(toolUse)) return [];
    const { toolUseId, name } = toolUse;
    if (typeof toolUseId !== 'string' || typeof name !== 'string') throw malformedEvent();
    const index = this.toolCalls++;
    this.toolIndexByBlock.set(blockIndex, index);
    return [{ type: 'tool_call', choice: CHOICE, index, id: toolUseId, name, arguments: '' }];
  }

  private blockDelta(blockIndex: number, delta: Record<string, unknown>): ChatStreamEvent[] {
    if (delta.text !== undefined) return pieceEvents('text', delta.text);
    if (isJsonObject(delta.toolUse)) {
      const index = this.toolIndexByBlock.get(blockIndex);
      const json = delta.toolUse.input;
      if (index === undefined || typeof json !== 'string') throw malformedEvent();
      return json === '' ? [] : [{ type: 'tool_call_arguments', choice: CHOICE, index, arguments: json }];
    }
    if (isJsonObject(delta.reasoningContent)) {
      const { text, signature, redactedContent } = delta.reasoningContent;
      if (text !== undefined) return pieceEvents('reasoning', text);
      if (typeof signature === 'string') return [{ type: 'reasoning_signature', choice: CHOICE, signature }];
      if (typeof redactedContent === 'string') return [{ type: 'redacted_reasoning', choice: CHOICE, data: redactedContent }];
    }
    // citations and delta types added later
    return [];
  }
}
