import type { ChatResponse, ChatUsage, ContentPart } from '../../core/chat';
import { jsonObjectIn } from '../../core/json';
import { stopReasonOf } from '../../providers/anthropic/stop-reasons';
import { anthropicUsageOf } from '../../providers/anthropic/usage';
import type { AnswerBlock, AnswerMessage, MessageUsage } from '../../providers/anthropic/wire';

const MESSAGE_ID_PREFIX = 'msg_';

/** The id a Messages client sees: Anthropic's form, the provider's own id kept inside it. */
export function anthropicMessageId(providerId: string): string {
  return providerId.startsWith(MESSAGE_ID_PREFIX) ? providerId : `${MESSAGE_ID_PREFIX}${providerId}`;
}

/** The Message object, fields in Anthropic's order. */
export function anthropicMessage(
  id: string,
  model: string,
  content: AnswerBlock[],
  stopReason: string | null,
  usage: MessageUsage,
): AnswerMessage {
  return { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage };
}

/**
 * A tool call's arguments as `input`. Arguments that are not a JSON object (a model's broken
 * output) become `{}`: the client's tool then reports the missing parameters to the model, which
 * can try again, where a 5xx would lose the whole answer.
 */
export function toolInputOf(args: string): Record<string, unknown> {
  return jsonObjectIn(args) ?? {};
}

/**
 * The answer's parts as blocks, merged as a stream would give them: consecutive texts are one
 * text block, consecutive reasoning one thinking block until a signature closes it. Reasoning
 * without a signature (Gemini's or an OpenAI-compatible model's) gets `signature: ''`, as other
 * gateways send it: the SDK types require the field, and such a block sent back is read as
 * reasoning without a signature (client-request.ts). Empty pieces and input-side parts are none.
 */
function blocksOf(parts: ContentPart[]): AnswerBlock[] {
  const blocks: AnswerBlock[] = [];
  for (const part of parts) {
    const last = blocks.at(-1);
    switch (part.type) {
      case 'text':
        if (part.text === '') break;
        if (last?.type === 'text') last.text += part.text;
        else blocks.push({ type: 'text', text: part.text });
        break;
      case 'reasoning':
        if (part.text === '' && !part.signature) break;
        if (last?.type === 'thinking' && last.signature === '') {
          last.thinking += part.text;
          last.signature = part.signature ?? '';
        } else {
          blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
        }
        break;
      case 'redacted_reasoning':
        blocks.push({ type: 'redacted_thinking', data: part.data });
        break;
      case 'tool_call':
        blocks.push({ type: 'tool_use', id: part.id, name: part.name, input: toolInputOf(part.arguments) });
        break;
      default:
        // images, files, audio and tool results are input, never an answer's
        break;
    }
  }
  return blocks;
}

/**
 * A whole internal answer as Anthropic's Message object (docs/api.md 2.9), `model` as the client
 * asked. Anthropic has no `n`: only choice 0 is written.
 */
export function chatResponseToAnthropic(response: ChatResponse, model: string, usage: ChatUsage): AnswerMessage {
  const choice = response.choices.find((candidate) => candidate.index === 0) ?? response.choices[0];
  const content = blocksOf(choice?.content ?? []);
  return anthropicMessage(
    anthropicMessageId(response.id),
    model,
    content,
    stopReasonOf(choice?.finishReason ?? 'stop'),
    anthropicUsageOf(usage),
  );
}
