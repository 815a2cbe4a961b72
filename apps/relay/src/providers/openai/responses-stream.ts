import type { AppError } from '@modelgate/errors';
import type { ResponsesBody } from '../../endpoints/responses/request';
import type { ChatStreamEncoder } from '../../endpoints/translated';
import type { ChatStreamEvent, ChatUsage } from '../chat';

export interface ResponsesEventEncoderOptions {
  body: ResponsesBody;
  requestId: string;
}

/** Internal stream events as the Responses SSE sequence (docs/api.md 2.10), each written at once. */
export class ResponsesEventEncoder implements ChatStreamEncoder {
  constructor(readonly options: ResponsesEventEncoderOptions) {
    throw new Error('skeleton: built by the Responses helper');
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
