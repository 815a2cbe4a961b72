import type { ChatResponse, ChatUsage } from '../chat';

/** A whole internal answer as Anthropic's Message object (docs/api.md 2.9), `model` as the client asked. */
export function chatResponseToAnthropic(response: ChatResponse, model: string, usage: ChatUsage): Record<string, unknown> {
  void response;
  void model;
  void usage;
  throw new Error('skeleton: built by the Anthropic client-direction helper');
}
