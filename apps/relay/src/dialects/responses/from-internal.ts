import type { ResponsesBody } from './request';
import type { ChatResponse, ChatUsage } from '../../core/chat';
import { outputOf, responseIdOf, responseObjectOf } from './output';
import { customToolNames } from './custom-tools';

/**
 * A whole internal answer as the Responses `response` object (docs/api.md 2.10), echoing the
 * request's parameters: its first choice (a Responses request asks for one), `usage` as billed; a
 * call of a custom tool's function as a custom tool call.
 */
export function chatResponseToResponses(response: ChatResponse, body: ResponsesBody, usage: ChatUsage): Record<string, unknown> {
  const choice = response.choices[0];
  return responseObjectOf(body, {
    id: responseIdOf(response.id),
    createdAt: response.created,
    output: outputOf(choice?.content ?? [], customToolNames(body)),
    outcome: { status: 'ended', finishReason: choice?.finishReason ?? 'stop', usage },
  });
}
