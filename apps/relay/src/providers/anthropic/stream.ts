import { isJsonObject } from '../../core/json';
import { eventObjectOf, malformedEvent, reportedStreamError } from '../../features/relay/event-stream';
import type { SseEvent } from '../../core/provider';
import type { ChatStreamEvent } from '../../core/chat';
import type { ChatStreamDecoder } from '../../core/provider';
import { nowSeconds } from '../../core/time';
import { finishReasonOf } from './stop-reasons';
import { type AnthropicUsage, mergeReportedUsage, MESSAGE_DELTA_USAGE, MESSAGE_START_USAGE, partialUsageOf } from './usage';

/** Anthropic answers with one choice. */
const CHOICE = 0;

/** A field of an event that must be a record. */
function recordIn(event: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = event[key];
  if (!isJsonObject(value)) throw malformedEvent();
  return value;
}

function stringIn(record: Record<string, unknown>, key: string): string {
  const value = record[key];
  if (typeof value !== 'string') throw malformedEvent();
  return value;
}

/** A text or reasoning piece as an event; an empty piece is none. */
function pieceEvents(type: 'text' | 'reasoning', text: string): ChatStreamEvent[] {
  return text === '' ? [] : [{ type, choice: CHOICE, text }];
}

function blockIndexOf(event: Record<string, unknown>): number {
  const index = event.index;
  if (typeof index !== 'number') throw malformedEvent();
  return index;
}

/**
 * Anthropic's SSE (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`,
 * `error`) read into internal events as each arrives. Tool calls are numbered in their order of
 * appearance, as OpenAI numbers them, whatever the block index; usage fields are cumulative, so
 * the latest value of each is kept and the prompt side recomputed from them.
 */
class AnthropicStreamDecoder implements ChatStreamDecoder {
  private finished = false;
  private toolCalls = 0;
  private readonly toolIndexByBlock = new Map<number, number>();
  private readonly usage: AnthropicUsage = {};

  get done(): boolean {
    return this.finished;
  }

  /** `message_stop` came. */
  get complete(): boolean {
    return this.finished;
  }

  decode(event: SseEvent): ChatStreamEvent[] {
    if (event.data === null) return [];
    const data = eventObjectOf(event.data);
    switch (data.type) {
      case 'message_start': {
        const message = recordIn(data, 'message');
        const start: ChatStreamEvent = { type: 'start', id: stringIn(message, 'id'), created: nowSeconds() };
        return isJsonObject(message.usage) ? [start, this.usageEvent(message.usage, MESSAGE_START_USAGE)] : [start];
      }
      case 'content_block_start':
        return this.blockStart(blockIndexOf(data), recordIn(data, 'content_block'));
      case 'content_block_delta':
        return this.blockDelta(blockIndexOf(data), recordIn(data, 'delta'));
      case 'message_delta': {
        const stopReason = recordIn(data, 'delta').stop_reason;
        const events: ChatStreamEvent[] =
          typeof stopReason === 'string' ? [{ type: 'finish', choice: CHOICE, reason: finishReasonOf(stopReason) }] : [];
        if (isJsonObject(data.usage)) events.push(this.usageEvent(data.usage, MESSAGE_DELTA_USAGE));
        return events;
      }
      case 'message_stop':
        this.finished = true;
        return [];
      case 'error':
        throw reportedStreamError(data.error);
      default:
        // ping, content_block_stop, and event types added later
        return [];
    }
  }

  private blockStart(blockIndex: number, block: Record<string, unknown>): ChatStreamEvent[] {
    switch (block.type) {
      case 'text':
        return pieceEvents('text', stringIn(block, 'text'));
      case 'thinking': {
        const signature = typeof block.signature === 'string' ? block.signature : '';
        const events = pieceEvents('reasoning', stringIn(block, 'thinking'));
        if (signature !== '') events.push({ type: 'reasoning_signature', choice: CHOICE, signature });
        return events;
      }
      case 'redacted_thinking':
        return [{ type: 'redacted_reasoning', choice: CHOICE, data: stringIn(block, 'data') }];
      case 'tool_use': {
        const index = this.toolCalls++;
        this.toolIndexByBlock.set(blockIndex, index);
        const input = isJsonObject(block.input) ? block.input : {};
        const args = Object.keys(input).length > 0 ? JSON.stringify(input) : '';
        return [{ type: 'tool_call', choice: CHOICE, index, id: stringIn(block, 'id'), name: stringIn(block, 'name'), arguments: args }];
      }
      default:
        // server-tool blocks are the upstream's own business
        return [];
    }
  }

  private blockDelta(blockIndex: number, delta: Record<string, unknown>): ChatStreamEvent[] {
    switch (delta.type) {
      case 'text_delta':
        return pieceEvents('text', stringIn(delta, 'text'));
      case 'thinking_delta':
        return pieceEvents('reasoning', stringIn(delta, 'thinking'));
      case 'signature_delta':
        return [{ type: 'reasoning_signature', choice: CHOICE, signature: stringIn(delta, 'signature') }];
      case 'input_json_delta': {
        const json = stringIn(delta, 'partial_json');
        const index = this.toolIndexByBlock.get(blockIndex);
        // A server tool's input (no client tool call) is not the client's.
        return index === undefined || json === '' ? [] : [{ type: 'tool_call_arguments', choice: CHOICE, index, arguments: json }];
      }
      default:
        // citations_delta and delta types added later
        return [];
    }
  }

  private usageEvent(reported: Record<string, unknown>, fields: readonly (keyof AnthropicUsage)[]): ChatStreamEvent {
    mergeReportedUsage(this.usage, reported, fields);
    return { type: 'usage', usage: partialUsageOf(this.usage) };
  }
}

export function anthropicStreamDecoder(): ChatStreamDecoder {
  return new AnthropicStreamDecoder();
}
