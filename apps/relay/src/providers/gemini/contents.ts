import { isJsonObject, toolArgumentsOf } from '../../core/json';
import { alternatingTurns } from '../turns';
import { AppError } from '@modelgate/errors';
import type { ChatMessage, ContentPart } from '../../core/chat';
import { DEFAULT_FILE_MIME, DEFAULT_IMAGE_MIME, mediaPart } from './media';
import { type GeminiContent, type GeminiPart } from './wire';

/**
 * Google's documented stand-in for a signature the history lacks (a call made by another model, or
 * a client that dropped it): Gemini 3 refuses a turn whose first function call carries none.
 */
const SKIP_SIGNATURE_VALIDATION = 'skip_thought_signature_validator';

function invalidMessages(message: string): AppError {
  return new AppError('invalid_request', `messages: ${message}`, { param: 'messages' });
}

function textOf(parts: ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * `functionResponse.response` is a JSON object: a result that is one is sent as is, any other text
 * under `content` (or `error`, Google's key for a failed call).
 */
function responseOf(content: ContentPart[], isError: boolean | undefined): Record<string, unknown> {
  const text = textOf(content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (isJsonObject(parsed)) return parsed;
  } catch {
    // plain text
  }
  return isError ? { error: text } : { content: text };
}

/** The parts of one message; `names` maps the tool calls seen so far to their function names. */
function partsOf(message: ChatMessage, names: Map<string, string>): GeminiPart[] {
  const fromModel = message.role === 'assistant';
  const parts: GeminiPart[] = [];
  // Gemini puts a thought signature on the part after the thoughts; the internal form carries it
  // on the reasoning part before that one (docs/api.md 2.6).
  let signature: string | undefined;
  for (const part of message.content) {
    const carried = signature;
    signature = undefined;
    switch (part.type) {
      case 'text':
        if (part.text !== '') parts.push(carried === undefined ? { text: part.text } : { text: part.text, thoughtSignature: carried });
        break;
      case 'tool_call': {
        names.set(part.id, part.name);
        const call: GeminiPart = { functionCall: { name: part.name, args: toolArgumentsOf(part) } };
        if (carried !== undefined) call.thoughtSignature = carried;
        parts.push(call);
        break;
      }
      case 'reasoning':
        // The thought text itself is not sent back: Gemini keeps its reasoning behind the signature.
        if (fromModel) signature = part.signature;
        break;
      case 'image':
        parts.push(mediaPart(part.source, DEFAULT_IMAGE_MIME));
        break;
      case 'file':
        parts.push(mediaPart(part.source, DEFAULT_FILE_MIME));
        break;
      case 'audio':
        parts.push({ inlineData: { mimeType: `audio/${part.format}`, data: part.data } });
        break;
      case 'tool_result': {
        const name = names.get(part.toolCallId);
        if (name === undefined) throw invalidMessages(`no earlier tool call has the id "${part.toolCallId}"`);
        parts.push({ functionResponse: { name, response: responseOf(part.content, part.isError) } });
        // Images a tool returned follow its response as parts of their own.
        parts.push(...partsOf({ role: 'user', content: part.content.filter((inner) => inner.type !== 'text') }, names));
        break;
      }
      case 'redacted_reasoning':
        // Anthropic's encrypted reasoning means nothing to Gemini.
        break;
    }
  }
  if (fromModel) {
    const firstCall = parts.find((part) => part.functionCall !== undefined);
    if (firstCall && firstCall.thoughtSignature === undefined) firstCall.thoughtSignature = SKIP_SIGNATURE_VALIDATION;
  }
  return parts;
}

/**
 * The conversation as Gemini `contents`: assistant turns have role `model`, user and tool turns
 * role `user`, one turn per side in alternation (tool results and the user's next words go out as
 * one turn, as Gemini expects).
 */
export function contentsOf(messages: ChatMessage[]): GeminiContent[] {
  const names = new Map<string, string>();
  return alternatingTurns(messages, (message) => partsOf(message, names)).map(({ assistant, items }) => ({
    role: assistant ? 'model' : 'user',
    parts: items,
  }));
}

/** System and developer instructions (text parts) as `systemInstruction`, undefined when empty. */
export function systemInstructionOf(system: ContentPart[]): { parts: GeminiPart[] } | undefined {
  const parts = system.flatMap((part) => (part.type === 'text' && part.text !== '' ? [{ text: part.text }] : []));
  return parts.length === 0 ? undefined : { parts };
}
