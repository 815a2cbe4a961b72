import type { AppError } from '@modelgate/errors';
import type { ChatStreamEncoder } from '../../endpoints/translated';
import type { ChatStreamEvent, ChatUsage } from '../chat';

export interface AnthropicEventEncoderOptions {
  /** The model the client asked for. */
  model: string;
  requestId: string;
  /** The reservation's prompt estimate, for `message_start` (the final count goes in `message_delta`). */
  promptTokens: number;
}

/** Internal stream events as Anthropic's SSE sequence (docs/api.md 2.9), each written at once. */
export class AnthropicEventEncoder implements ChatStreamEncoder {
  constructor(readonly options: AnthropicEventEncoderOptions) {
    throw new Error('skeleton: built by the Anthropic client-direction helper');
  }

  encode(event: ChatStreamEvent): string {
    void event;
    return '';
  }

  tail(usage: ChatUsage): string {
    void usage;
    return '';
  }

  errorTail(error: AppError): string {
    void error;
    return '';
  }

  usage(): Partial<ChatUsage> {
    return {};
  }

  deliveredText(): string[] {
    return [];
  }
}
