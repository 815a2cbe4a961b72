import { dataUrlContent } from '../../core/media';
import { toolArgumentsOf } from '../../core/json';
import { alternatingTurns } from '../turns';
import { AppError } from '@modelgate/errors';
import type { ChatMessage, ContentPart, ImageSource, InlineImageSource, PartExtras } from '../../core/chat';
import { type MediaSource, type MessageParam, type RequestBlock } from './wire';

const HTTP_URL = /^https?:\/\//i;

/** Every content problem is the client's, in its `messages` (docs/api.md 2.6). */
function invalidContent(message: string): AppError {
  return new AppError('invalid_request', message, { param: 'messages' });
}

function hasExtras(extras: PartExtras | undefined): extras is PartExtras {
  return extras !== undefined && Object.keys(extras).length > 0;
}

function mediaSourceOf(source: ImageSource | InlineImageSource): MediaSource {
  if (source.kind === 'base64') return { type: 'base64', media_type: source.mediaType, data: source.data };
  const inline = source.url.startsWith('data:') ? dataUrlContent(source.url) : undefined;
  if (inline?.mediaType) return { type: 'base64', media_type: inline.mediaType, data: inline.data };
  if (HTTP_URL.test(source.url)) return { type: 'url', url: source.url };
  throw invalidContent('an image or file URL must be an http(s) URL or a data: URL with a media type');
}

/** Anthropic reads plain-text documents as text, not base64; PDFs and URLs go as they are. */
function documentSourceOf(source: ImageSource | InlineImageSource): MediaSource {
  const media = mediaSourceOf(source);
  if (media.type === 'base64' && media.media_type.toLowerCase() === 'text/plain') {
    return { type: 'text', media_type: 'text/plain', data: Buffer.from(media.data, 'base64').toString('utf8') };
  }
  return media;
}

/** A tool result's content: a string when it is one plain text, else its blocks; omitted when empty. */
function toolResultContentOf(parts: ContentPart[]): string | RequestBlock[] | undefined {
  const [only] = parts;
  if (parts.length === 1 && only?.type === 'text' && !hasExtras(only.extras)) return only.text === '' ? undefined : only.text;
  const blocks = blocksOf(parts);
  return blocks.length === 0 ? undefined : blocks;
}

/**
 * One internal part as an Anthropic block, or undefined when it has no Anthropic form that would
 * be accepted: empty text, and reasoning without a signature (another provider's reasoning, which
 * Anthropic cannot verify). Extras go first so they can never replace the block's own fields.
 */
function blockOf(part: ContentPart): RequestBlock | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { ...part.extras, type: 'text', text: part.text };
    case 'image':
      return { ...part.extras, type: 'image', source: mediaSourceOf(part.source) };
    case 'file':
      return {
        ...part.extras,
        type: 'document',
        source: documentSourceOf(part.source),
        ...(part.name ? { title: part.name } : {}),
      };
    case 'audio':
      // Dropping the audio would answer a different question than the one asked (docs/api.md 2.6).
      throw invalidContent('audio input is not supported by this model');
    case 'reasoning':
      return part.signature ? { type: 'thinking', thinking: part.text, signature: part.signature } : undefined;
    case 'redacted_reasoning':
      return { type: 'redacted_thinking', data: part.data };
    case 'tool_call':
      return { ...part.extras, type: 'tool_use', id: part.id, name: part.name, input: toolArgumentsOf(part) };
    case 'tool_result': {
      const content = toolResultContentOf(part.content);
      return {
        ...part.extras,
        type: 'tool_result',
        tool_use_id: part.toolCallId,
        ...(content === undefined ? {} : { content }),
        ...(part.isError ? { is_error: true } : {}),
      };
    }
  }
}

function blocksOf(parts: ContentPart[]): RequestBlock[] {
  return parts.flatMap((part) => blockOf(part) ?? []);
}

/**
 * The system prompt: a string when it is one plain text, else text blocks (their extras carry
 * `cache_control`); undefined when there is none.
 */
export function systemOf(parts: ContentPart[]): string | RequestBlock[] | undefined {
  const texts = parts.flatMap((part) => (part.type === 'text' && part.text !== '' ? [part] : []));
  const [only] = texts;
  if (texts.length === 1 && only && !hasExtras(only.extras)) return only.text;
  return texts.length === 0 ? undefined : texts.map((part) => ({ ...part.extras, type: 'text' as const, text: part.text }));
}

/**
 * The turns as Anthropic requires them: strictly alternating user and assistant messages, tool
 * results inside the user turn right after the assistant's tool calls.
 */
export function messagesOf(messages: ChatMessage[]): MessageParam[] {
  return alternatingTurns(messages, (message) => blocksOf(message.content)).map(({ assistant, items }) => ({
    role: assistant ? 'assistant' : 'user',
    content: items,
  }));
}
