import type { ResponsesBody } from './request';
import type { ChatResponse, ChatUsage } from '../../core/chat';
import { outputOf, responseIdOf, responseObjectOf } from './output';

/**
 * A whole internal answer as the Responses `response` object (docs/api.md 2.10), echoing the
 * request's parameters: its first choice (a Responses request asks for one), `usage` as billed.
 */
export function chatResponseToResponses(response: ChatResponse, body: ResponsesBody, usage: ChatUsage): Record<string, unknown> {
  const choice = response.choices[0];
  return responseObjectOf(body, {
    id: responseIdOf(response.id),
    createdAt: response.created,
    output: outputOf(choice?.content ?? []),
    outcome: { status: 'ended', finishReason: choice?.finishReason ?? 'stop', usage },
  });
}
