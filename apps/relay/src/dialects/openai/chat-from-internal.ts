import type { ChatResponse, ChatUsage } from '../../core/chat';
import { assistantMessageToOpenAI, chatCompletionId } from '../../providers/openai/chat-response';
import { usageToOpenAI } from '../../providers/openai/usage';

/** A whole answer's message gets `refusal`, set on it rather than spread into a copy (~1 us in V8). */
function refusalAdded(message: Record<string, unknown>): Record<string, unknown> {
  message.refusal = null;
  return message;
}

/**
 * An internal answer as OpenAI's `chat.completion` (docs/api.md 2.7): `model` is the client's name
 * for it, `usage` the full object of docs/api.md 2.1 (the relay's counts when the provider gave none).
 */
export function chatResponseToOpenAI(response: ChatResponse, model: string, usage: ChatUsage): Record<string, unknown> {
  return {
    id: chatCompletionId(response.id),
    object: 'chat.completion',
    created: response.created,
    model,
    choices: response.choices.map((choice) => ({
      index: choice.index,
      message: refusalAdded(assistantMessageToOpenAI(choice.content)),
      logprobs: null,
      finish_reason: choice.finishReason,
    })),
    usage: usageToOpenAI(usage),
  };
}
