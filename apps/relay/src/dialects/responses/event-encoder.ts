import type { AppError } from '@modelgate/errors';
import type { ResponsesBody } from './request';
import type { ChatStreamEncoder } from '../translation';
import type { ChatStreamEvent, ChatUsage, ContentPart, FinishReason } from '../../core/chat';
import { nowSeconds } from '../../core/time';
import {
  appendToOutput,
  failureMessageOf,
  includesEncryptedReasoning,
  type OutputSource,
  outputItemId,
  outputItemOf,
  outputTextOf,
  reasoningText,
  type ResponseOutcome,
  responseIdOf,
  responseObjectOf,
  startedItemOf,
  summaryPartOf,
} from './output';
import { CustomInputDecoder, customToolNames } from './custom-tools';

function isCall(source: OutputSource | undefined): boolean {
  return source?.type === 'function_call' || source?.type === 'custom_tool_call';
}

export interface ResponsesEventEncoderOptions {
  body: ResponsesBody;
  requestId: string;
}

/** The answer's one choice (a Responses request asks for one). */
const CHOICE = 0;

/**
 * Internal stream events as the Responses SSE sequence (docs/api.md 2.10), each written at once:
 * `response.created` and `response.in_progress`, then per output item its `added` event, its deltas
 * and, when the next item starts, its `done` events; last `response.completed` (`incomplete` for an
 * answer that stopped short) carrying the response object a whole answer would have. Consecutive
 * tool calls stay open together until the run of calls ends, because OpenAI-compatible servers
 * may interleave the argument pieces of parallel calls. A call of a custom tool's function is a
 * custom tool call whose input is decoded from the argument pieces as they come (custom-tools.ts).
 */
export class ResponsesEventEncoder implements ChatStreamEncoder {
  private responseId: string;
  private createdAt: number | undefined;
  private started = false;
  private sequenceNumber = 0;
  private readonly output: OutputSource[] = [];
  /** Output indexes of the items not closed yet, in order. */
  private open: number[] = [];
  /** The output index of each tool call, by its index in the stream. */
  private readonly toolCalls = new Map<number, number>();
  /** The input decoder of each custom tool call still open, by output index. */
  private readonly inputs = new Map<number, CustomInputDecoder>();
  private readonly customTools: ReadonlySet<string>;
  private finishReason: FinishReason = 'stop';
  private readonly withEncrypted: boolean;
  private readonly delivered: string[] = [];
  private readonly reported: Partial<ChatUsage> = {};

  constructor(readonly options: ResponsesEventEncoderOptions) {
    this.responseId = responseIdOf(options.requestId);
    this.withEncrypted = includesEncryptedReasoning(options.body);
    this.customTools = customToolNames(options.body);
  }

  encode(event: ChatStreamEvent): string {
    switch (event.type) {
      case 'start':
        if (!this.started) {
          this.responseId = responseIdOf(event.id);
          this.createdAt = event.created;
        }
        return this.begin();
      case 'usage':
        Object.assign(this.reported, event.usage);
        return '';
      default:
        return event.choice === CHOICE ? this.begin() + this.encodeOutput(event) : '';
    }
  }

  /** After the last event: the open items closed, then the final response. */
  tail(usage: ChatUsage): string {
    return this.begin() + this.end({ status: 'ended', finishReason: this.finishReason, usage });
  }

  /** When the upstream failed after the client's first byte: `response.failed` (docs/api.md 2.10). */
  errorTail(error: AppError): string {
    const message = failureMessageOf(error, this.options.requestId);
    return this.begin() + this.emit('response.failed', { response: this.response({ status: 'failed', message }) });
  }

  /** The usage the provider reported so far, field by field. */
  usage(): Partial<ChatUsage> {
    return { ...this.reported };
  }

  /** Text, reasoning, tool names and arguments sent: what the relay counts when no usage came. */
  deliveredText(): string[] {
    return this.delivered;
  }

  private encodeOutput(event: Exclude<ChatStreamEvent, { type: 'start' | 'usage' }>): string {
    switch (event.type) {
      case 'text': {
        if (event.text === '') return '';
        this.delivered.push(event.text);
        const text = this.add({ type: 'text', text: event.text });
        const index = this.output.length - 1;
        return text + this.emit('response.output_text.delta', { item_id: this.itemId(index), output_index: index, content_index: 0, delta: event.text, logprobs: [] });
      }
      case 'reasoning': {
        if (event.text === '') return '';
        this.delivered.push(event.text);
        let text = this.add({ type: 'reasoning', text: event.text });
        const index = this.output.length - 1;
        const item = this.output[index];
        // The summary part begins with the item's first text.
        if (item?.type === 'reasoning' && reasoningText(item.part) === event.text) {
          text += this.emit('response.reasoning_summary_part.added', { item_id: this.itemId(index), output_index: index, summary_index: 0, part: summaryPartOf('') });
        }
        return text + this.emit('response.reasoning_summary_text.delta', { item_id: this.itemId(index), output_index: index, summary_index: 0, delta: event.text });
      }
      case 'reasoning_signature':
        return this.add({ type: 'reasoning', text: '', signature: event.signature });
      case 'redacted_reasoning':
        return this.add({ type: 'redacted_reasoning', data: event.data });
      case 'tool_call': {
        this.delivered.push(event.name, event.arguments);
        // Announced with nothing generated yet; the arguments follow as its first piece.
        const text = this.add({ type: 'tool_call', id: event.id, name: event.name, arguments: '' });
        const index = this.output.length - 1;
        this.toolCalls.set(event.index, index);
        if (this.output[index]?.type === 'custom_tool_call') this.inputs.set(index, new CustomInputDecoder());
        return text + this.argumentsPiece(index, event.arguments);
      }
      case 'tool_call_arguments': {
        const index = this.toolCalls.get(event.index);
        if (index === undefined || event.arguments === '') return '';
        this.delivered.push(event.arguments);
        return this.argumentsPiece(index, event.arguments);
      }
      case 'finish':
        this.finishReason = event.reason;
        return '';
    }
  }

  /** `response.created` and `response.in_progress`, once, before anything else. */
  private begin(): string {
    if (this.started) return '';
    this.started = true;
    this.createdAt ??= nowSeconds();
    const response = this.response({ status: 'in_progress' });
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  /**
   * Adds a part to the output. When it starts an item, the open items it ends are closed (a
   * tool call ends none but tool calls) and the new one is announced.
   */
  private add(part: ContentPart): string {
    const started = appendToOutput(this.output, part, this.customTools);
    if (started === undefined) return '';
    let text = '';
    const runOfCalls = isCall(started) && this.open.every((index) => isCall(this.output[index]));
    if (!runOfCalls) {
      text += this.open.map((index) => this.settle(index) + this.close(index, this.itemOf(index))).join('');
      this.open = [];
    }
    const index = this.output.length - 1;
    this.open.push(index);
    text += this.emit('response.output_item.added', { output_index: index, item: startedItemOf(started, this.itemId(index)) });
    if (started.type === 'message') {
      text += this.emit('response.content_part.added', { ...this.itemRef(index), content_index: 0, part: outputTextOf('') });
    }
    return text;
  }

  /** The `done` events of an item, the last one carrying `item` as the response holds it. */
  private close(index: number, item: unknown): string {
    const source = this.output[index];
    const ref = this.itemRef(index);
    let text = '';
    switch (source?.type) {
      case 'reasoning': {
        const summary = reasoningText(source.part);
        if (summary !== '') {
          text += this.emit('response.reasoning_summary_text.done', { ...ref, summary_index: 0, text: summary });
          text += this.emit('response.reasoning_summary_part.done', { ...ref, summary_index: 0, part: summaryPartOf(summary) });
        }
        break;
      }
      case 'message':
        text += this.emit('response.output_text.done', { ...ref, content_index: 0, text: source.text, logprobs: [] });
        text += this.emit('response.content_part.done', { ...ref, content_index: 0, part: outputTextOf(source.text) });
        break;
      case 'function_call':
        text += this.emit('response.function_call_arguments.done', { ...ref, arguments: source.arguments });
        break;
      case 'custom_tool_call':
        text += this.emit('response.custom_tool_call_input.done', { ...ref, input: source.input });
        break;
    }
    return text + this.emit('response.output_item.done', { output_index: index, item });
  }

  /** The open items closed with their final form, then the response's last event (named after its status). */
  private end(outcome: ResponseOutcome): string {
    // The open custom calls' inputs are settled first: the response holds them whole.
    let text = this.open.map((index) => this.settle(index)).join('');
    const response = this.response(outcome);
    const items = response.output as unknown[];
    text += this.open.map((index) => this.close(index, items[index])).join('');
    this.open = [];
    return text + this.emit(`response.${String(response.status)}`, { response });
  }

  private response(outcome: ResponseOutcome): Record<string, unknown> {
    return responseObjectOf(this.options.body, {
      id: this.responseId,
      createdAt: this.createdAt ?? nowSeconds(),
      output: this.output,
      outcome,
    });
  }

  /** An item closed before the response ends: complete. */
  private itemOf(index: number): Record<string, unknown> {
    const source = this.output[index] as OutputSource;
    return outputItemOf(source, this.itemId(index), 'completed', this.withEncrypted);
  }

  private itemId(index: number): string {
    return outputItemId(this.output[index] as OutputSource, this.responseId, index);
  }

  /** For the few events per item; the per-chunk deltas spell these fields out (spread-then-grow costs V8 ~1 us). */
  private itemRef(index: number): { item_id: string; output_index: number } {
    return { item_id: this.itemId(index), output_index: index };
  }

  /**
   * A piece of a call's arguments: sent as it is for a function call, as the input text it
   * completes for a custom tool call. A piece arriving after another kind of item closed its call
   * is still sent to a function call (the final response holds the whole arguments); a custom
   * call's input was given whole when it closed, so such a piece is only counted.
   */
  private argumentsPiece(index: number, piece: string): string {
    if (piece === '') return '';
    const call = this.output[index];
    if (call?.type === 'function_call') {
      call.arguments += piece;
      return this.emit('response.function_call_arguments.delta', { item_id: this.itemId(index), output_index: index, delta: piece });
    }
    const decoder = this.inputs.get(index);
    return call?.type === 'custom_tool_call' && decoder ? this.inputDelta(index, call, decoder.push(piece)) : '';
  }

  /** A custom call's input is whole when the call closes: what its decoder still has is sent then. */
  private settle(index: number): string {
    const call = this.output[index];
    const decoder = this.inputs.get(index);
    if (call?.type !== 'custom_tool_call' || !decoder) return '';
    this.inputs.delete(index);
    return this.inputDelta(index, call, decoder.finish());
  }

  private inputDelta(index: number, call: Extract<OutputSource, { type: 'custom_tool_call' }>, delta: string): string {
    if (delta === '') return '';
    call.input += delta;
    return this.emit('response.custom_tool_call_input.delta', { item_id: this.itemId(index), output_index: index, delta });
  }

  /** One event, framed as OpenAI frames it: the `event:` line names its type. */
  private emit(type: string, fields: Record<string, unknown>): string {
    const event = { type, sequence_number: this.sequenceNumber++, ...fields };
    return `event: ${type}\ndata: ${JSON.stringify(event)}\n\n`;
  }
}
