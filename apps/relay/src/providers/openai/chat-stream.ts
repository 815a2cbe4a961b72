import { StreamEventError } from '../../features/relay/event-stream';
import type { SseEvent } from '../../core/provider';
import type { ChatStreamEvent } from '../../core/chat';
import type { ChatStreamDecoder } from '../../core/provider';
import { createdOf, finishReasonFromOpenAI, reasoningOf } from './chat-response';
import { isJsonObject, objectOf } from '../../core/json';
import { usageFromOpenAI } from './usage';

function malformedEvent(): StreamEventError {
  return new StreamEventError('the upstream sent a malformed event');
}

/**
 * Reads OpenAI `chat.completion.chunk` events into internal events, each as it arrives. A tool
 * call starts at the first entry with an id and a name for its (choice, index); every later entry
 * for it carries more arguments (some servers repeat the id and name on each).
 */
export class OpenAIChatStreamDecoder implements ChatStreamDecoder {
  done = false;
  /** `[DONE]` or a finish_reason came: the answer is whole, even when the connection closes before `[DONE]`. */
  complete = false;
  private started = false;
  private readonly toolCalls = new Set<string>();

  decode(event: SseEvent): ChatStreamEvent[] {
    const data = event.data;
    if (data === null) return [];
    if (data.trim() === '[DONE]') {
      this.done = true;
      this.complete = true;
      return [];
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw malformedEvent();
    }
    if (!isJsonObject(chunk)) throw malformedEvent();
    if (chunk.error !== undefined && chunk.error !== null) {
      const message = typeof chunk.error === 'string' ? chunk.error : objectOf(chunk.error).message;
      throw new StreamEventError(typeof message === 'string' ? `upstream error: ${message}` : 'the upstream reported an error');
    }
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw malformedEvent();
    const events: ChatStreamEvent[] = [];
    // Azure sends a first chunk with an empty id (its prompt filter results): the answer starts at the first real id.
    if (!this.started && typeof chunk.id === 'string' && chunk.id !== '') {
      this.started = true;
      events.push({ type: 'start', id: chunk.id, created: createdOf(chunk.created) });
    }
    for (const [position, choice] of choices.entries()) this.decodeChoice(choice, position, events);
    const usage = usageFromOpenAI(chunk.usage);
    if (usage) events.push({ type: 'usage', usage });
    return events;
  }

  private decodeChoice(choice: unknown, position: number, events: ChatStreamEvent[]): void {
    if (!isJsonObject(choice)) throw malformedEvent();
    const index = typeof choice.index === 'number' && Number.isInteger(choice.index) ? choice.index : position;
    const delta = objectOf(choice.delta);
    const reasoning = reasoningOf(delta);
    if (reasoning !== undefined) events.push({ type: 'reasoning', choice: index, text: reasoning });
    for (const text of [delta.content, delta.refusal]) {
      if (typeof text === 'string' && text !== '') events.push({ type: 'text', choice: index, text });
    }
    const toolCalls = delta.tool_calls ?? [];
    if (!Array.isArray(toolCalls)) throw malformedEvent();
    for (const [callPosition, call] of toolCalls.entries()) this.decodeToolCall(call, index, callPosition, events);
    if (typeof choice.finish_reason === 'string') {
      this.complete = true;
      events.push({ type: 'finish', choice: index, reason: finishReasonFromOpenAI(choice.finish_reason) });
    }
  }

  private decodeToolCall(call: unknown, choice: number, position: number, events: ChatStreamEvent[]): void {
    if (!isJsonObject(call)) throw malformedEvent();
    const index = typeof call.index === 'number' && Number.isInteger(call.index) ? call.index : position;
    const fn = objectOf(call.function);
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    const key = `${choice}:${index}`;
    if (!this.toolCalls.has(key) && typeof call.id === 'string' && typeof fn.name === 'string') {
      this.toolCalls.add(key);
      events.push({ type: 'tool_call', choice, index, id: call.id, name: fn.name, arguments: args });
    } else if (args !== '') {
      events.push({ type: 'tool_call_arguments', choice, index, arguments: args });
    }
  }
}
