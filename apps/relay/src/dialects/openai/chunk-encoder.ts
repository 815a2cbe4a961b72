import { type AppError, toOpenAI } from '@modelgate/errors';
import type { ChatStreamEvent, ChatUsage } from '../../core/chat';
import { chatCompletionId } from '../../providers/openai/chat-response';
import { usageToOpenAI } from '../../providers/openai/usage';

export interface ChatChunkEncoderOptions {
  /** The model name the client asked for. */
  model: string;
  requestId: string;
  /** The client set `stream_options.include_usage`. */
  includeUsage: boolean;
}

/**
 * Writes internal stream events as OpenAI `chat.completion.chunk` events (docs/api.md 2.7), for a
 * chat client another provider answers: one chunk per event, at once. It also keeps what the relay
 * bills when the provider reports nothing: the pieces delivered and the usage reported so far.
 */
export class OpenAIChatChunkEncoder {
  private id: string;
  private created: number | undefined;
  private readonly roleSent = new Set<number>();
  private readonly delivered: string[] = [];
  private readonly reported: Partial<ChatUsage> = {};

  constructor(private readonly options: ChatChunkEncoderOptions) {
    this.id = chatCompletionId(options.requestId);
  }

  encode(event: ChatStreamEvent): string {
    switch (event.type) {
      case 'start':
        this.id = chatCompletionId(event.id);
        this.created = event.created;
        // OpenAI's first chunk: the role, and empty content.
        return this.chunk(0, { content: '' }, null);
      case 'text':
        this.delivered.push(event.text);
        return this.chunk(event.choice, { content: event.text }, null);
      case 'reasoning':
        this.delivered.push(event.text);
        return this.chunk(event.choice, { reasoning_content: event.text }, null);
      case 'tool_call':
        this.delivered.push(event.name, event.arguments);
        return this.chunk(
          event.choice,
          { tool_calls: [{ index: event.index, id: event.id, type: 'function', function: { name: event.name, arguments: event.arguments } }] },
          null,
        );
      case 'tool_call_arguments':
        this.delivered.push(event.arguments);
        return this.chunk(event.choice, { tool_calls: [{ index: event.index, function: { arguments: event.arguments } }] }, null);
      case 'finish':
        return this.chunk(event.choice, {}, event.reason);
      case 'usage':
        Object.assign(this.reported, event.usage);
        return '';
      // Signatures and redacted reasoning only mean something to the provider that made them.
      case 'reasoning_signature':
      case 'redacted_reasoning':
        return '';
    }
  }

  /** The end of a stream that finished: the usage chunk when the client asked for it, then `[DONE]`. */
  tail(usage: ChatUsage): string {
    if (!this.options.includeUsage) return 'data: [DONE]\n\n';
    const chunk = this.envelope();
    chunk.choices = [];
    chunk.usage = usageToOpenAI(usage);
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  }

  /** The end of a stream the upstream broke after the first byte (docs/api.md 2.1). */
  errorTail(error: AppError): string {
    return `data: ${JSON.stringify(toOpenAI(error, this.options.requestId).body)}\n\ndata: [DONE]\n\n`;
  }

  /** Text, reasoning, tool names and arguments sent: what the relay counts when no usage came. */
  deliveredText(): string[] {
    return this.delivered;
  }

  /** The usage the provider reported so far, field by field. */
  usage(): Partial<ChatUsage> {
    return { ...this.reported };
  }

  /**
   * A new chunk's first fields, in OpenAI's order; the caller adds the rest to it. Not spread into
   * another object: that copy cost several times the JSON.stringify of the chunk, once per event.
   */
  private envelope(): Record<string, unknown> {
    this.created ??= Math.floor(Date.now() / 1000);
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.options.model };
  }

  /** One chunk; the first delta of each choice carries the role, as OpenAI's do. */
  private chunk(choice: number, delta: Record<string, unknown>, finishReason: string | null): string {
    const withRole = this.roleSent.has(choice) ? delta : { role: 'assistant', ...delta };
    this.roleSent.add(choice);
    const chunk = this.envelope();
    chunk.choices = [{ index: choice, delta: withRole, logprobs: null, finish_reason: finishReason }];
    // With include_usage OpenAI sends `usage: null` on every chunk before the usage chunk.
    if (this.options.includeUsage) chunk.usage = null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }
}
