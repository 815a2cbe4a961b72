import type { ResponsesBody } from '../../endpoints/responses/request';
import type { ChatResponse, ChatUsage } from '../chat';

/** A whole internal answer as the Responses `response` object (docs/api.md 2.10), echoing the request's parameters. */
export function chatResponseToResponses(response: ChatResponse, body: ResponsesBody, usage: ChatUsage): Record<string, unknown> {
  void response;
  void body;
  void usage;
  throw new Error('skeleton: built by the Responses helper');
}
