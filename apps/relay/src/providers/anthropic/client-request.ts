import type { CountTokensBody, MessagesBody } from '../../endpoints/messages/request';
import type { ChatRequest } from '../chat';

/**
 * An Anthropic Messages request (docs/api.md 2.9) in the internal form, for a channel of another
 * dialect (2.6). A count_tokens body has no `max_tokens` or `stream`. Throws AppError
 * `invalid_request` (param = the block's path) for a block it cannot read.
 */
export function chatRequestFromAnthropic(body: CountTokensBody & Partial<MessagesBody>): ChatRequest {
  void body;
  throw new Error('skeleton: built by the Anthropic client-direction helper');
}
