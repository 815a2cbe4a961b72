import type { ResponsesBody } from '../../endpoints/responses/request';
import type { ChatRequest } from '../chat';

/**
 * A Responses request (docs/api.md 2.10) in the internal form, for a channel that does not speak it
 * natively. Stateless: `previous_response_id` is 400 (param `previous_response_id`); `store` is
 * ignored. Throws AppError `invalid_request` (param = the item's path) for an item it cannot read.
 */
export function chatRequestFromResponses(body: ResponsesBody): ChatRequest {
  void body;
  throw new Error('skeleton: built by the Responses helper');
}
