import { type AppError, toAnthropic } from '@modelgate/errors';
import type { ChatStreamEncoder } from '../translation';
import type { ChatStreamEvent, ChatUsage, FinishReason } from '../../core/chat';
import { anthropicMessage, anthropicMessageId } from './from-internal';
import { stopReasonOf } from '../../providers/anthropic/stop-reasons';
import { anthropicUsageOf } from '../../providers/anthropic/usage';
import type { AnswerBlock } from '../../providers/anthropic/wire';

export interface AnthropicEventEncoderOptions {
  /** The model the client asked for. */
  model: string;
  requestId: string;
  /** The reservation's prompt estimate, for `message_start` (the final count goes in `message_delta`). */
  promptTokens: number;
}

/** Anthropic answers with one choice: other choices' events are not written. */
const CHOICE = 0;

const EMPTY_THINKING: AnswerBlock = { type: 'thinking', thinking: '', signature: '' };

type ContentEvent = Exclude<ChatStreamEvent, { type: 'start' | 'usage' | 'finish' }>;

/** A `content_block_delta`'s delta. */
type BlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: 'input_json_delta'; partial_json: string };

/** The block being written: its index in the Message's content, and its type. */
interface OpenBlock {
  index: number;
  type: AnswerBlock['type'];
}

/** Anthropic's in-stream `error` event, with the body of its error answers (docs/api.md 1.3, 2.9). */
export function anthropicErrorEvent(error: AppError): string {
  return `event: error\ndata: ${JSON.stringify(toAnthropic(error).body)}\n\n`;
}

/** One SSE event as Anthropic frames it: the `event:` line repeats the data's `type`. */
function sse<Data extends { type: string }>(data: Data): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Internal stream events as Anthropic's SSE sequence (docs/api.md 2.9), each written at once:
 * `message_start` and a `ping` first, then per block `content_block_start`, its deltas and
 * `content_block_stop`, and at the end `message_delta` (stop reason, usage) and `message_stop`.
 * A block is closed when the next one begins, a thinking block also by its signature (as
 * Anthropic's are). The SDK's MessageStream accumulates from it the Message
 * chatResponseToAnthropic writes for the same answer.
 */
export class AnthropicEventEncoder implements ChatStreamEncoder {
  private id: string;
  private started = false;
  private blockCount = 0;
  private open: OpenBlock | undefined;
  /** The content index of each tool call's block, by the call's index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: FinishReason | undefined;
  private readonly delivered: string[] = [];
  private readonly reported: Partial<ChatUsage> = {};

  constructor(readonly options: AnthropicEventEncoderOptions) {
    this.id = anthropicMessageId(options.requestId);
  }

  encode(event: ChatStreamEvent): string {
    switch (event.type) {
      case 'start':
        if (!this.started) this.id = anthropicMessageId(event.id);
        return this.messageStart();
      case 'usage':
        Object.assign(this.reported, event.usage);
        return '';
      case 'finish':
        if (event.choice === CHOICE) this.finish = event.reason;
        return '';
      default:
        return event.choice === CHOICE ? this.content(event) : '';
    }
  }

  /**
   * The last block closed, then the stop reason (`tool_use` after a tool call when the upstream
   * gave none) and the usage as billed.
   */
  tail(usage: ChatUsage): string {
    const stopReason = stopReasonOf(this.finish ?? (this.toolBlocks.size > 0 ? 'tool_calls' : 'stop'));
    return (
      this.messageStart() +
      this.closeBlock() +
      sse({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: anthropicUsageOf(usage) }) +
      sse({ type: 'message_stop' })
    );
  }

  errorTail(error: AppError): string {
    return anthropicErrorEvent(error);
  }

  usage(): Partial<ChatUsage> {
    return { ...this.reported };
  }

  /** Text, reasoning, tool names and arguments sent: what the relay counts when no usage came. */
  deliveredText(): string[] {
    return this.delivered;
  }

  /**
   * `message_start` and a `ping`, once, before anything else (even when the upstream's start did
   * not come first). Its usage is the prompt estimate: the counts come in `message_delta`.
   */
  private messageStart(): string {
    if (this.started) return '';
    this.started = true;
    const usage = { input_tokens: this.options.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
    return sse({ type: 'message_start', message: anthropicMessage(this.id, this.options.model, [], null, usage) }) + sse({ type: 'ping' });
  }

  private content(event: ContentEvent): string {
    switch (event.type) {
      case 'text':
        if (event.text === '') return '';
        this.delivered.push(event.text);
        return this.continued({ type: 'text', text: '' }) + this.delta({ type: 'text_delta', text: event.text });
      case 'reasoning':
        if (event.text === '') return '';
        this.delivered.push(event.text);
        return this.continued(EMPTY_THINKING) + this.delta({ type: 'thinking_delta', thinking: event.text });
      case 'reasoning_signature':
        // With no reasoning open (Gemini signs the part after its thoughts) it is an empty thinking block.
        return this.continued(EMPTY_THINKING) + this.delta({ type: 'signature_delta', signature: event.signature }) + this.closeBlock();
      case 'redacted_reasoning':
        return this.begin({ type: 'redacted_thinking', data: event.data }) + this.closeBlock();
      case 'tool_call': {
        this.delivered.push(event.name, event.arguments);
        this.toolBlocks.set(event.index, this.blockCount);
        const start = this.begin({ type: 'tool_use', id: event.id, name: event.name, input: {} });
        return event.arguments === '' ? start : start + this.delta({ type: 'input_json_delta', partial_json: event.arguments });
      }
      case 'tool_call_arguments': {
        const index = this.toolBlocks.get(event.index);
        if (index === undefined || event.arguments === '') return '';
        this.delivered.push(event.arguments);
        // Arguments a server interleaves with a later call's go to their own call's block even when
        // it was closed (the SDK accumulates by index): holding them back is not an option.
        return this.delta({ type: 'input_json_delta', partial_json: event.arguments }, index);
      }
    }
  }

  /** Nothing when a block of `block`'s type is open, else `block` begun. */
  private continued(block: AnswerBlock): string {
    return this.open?.type === block.type ? '' : this.begin(block);
  }

  /** The open block closed and `block` started as the next one (after `message_start` if due). */
  private begin(block: AnswerBlock): string {
    const text = this.messageStart() + this.closeBlock();
    const index = this.blockCount++;
    this.open = { index, type: block.type };
    return text + sse({ type: 'content_block_start', index, content_block: block });
  }

  private delta(delta: BlockDelta, index = this.open?.index): string {
    return sse({ type: 'content_block_delta', index, delta });
  }

  private closeBlock(): string {
    if (!this.open) return '';
    const { index } = this.open;
    this.open = undefined;
    return sse({ type: 'content_block_stop', index });
  }
}
