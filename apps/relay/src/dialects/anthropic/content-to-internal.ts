import { AppError } from '@modelgate/errors';
import type { MessagesMessage } from './request';
import type { ChatMessage, ContentPart, ImageSource, InlineImageSource, PartExtras } from '../../core/chat';
import { isJsonObject } from '../../core/json';

/*
 * Anthropic content blocks read into internal parts, for a channel of another dialect (docs/api.md
 * 2.6, 2.9). The request schema only checked that each block is an object with a `type`: the
 * fields of each block read here are checked here, a 400 naming the field's path.
 */

type Block = Record<string, unknown>;
type Source = ImageSource | InlineImageSource;

/** The client's mistake at `path` (e.g. `messages.2.content.0.source`). */
export function invalidAt(path: string, problem: string): AppError {
  return new AppError('invalid_request', `${path}: ${problem}`, { param: path });
}

function stringAt(block: Block, key: string, path: string): string {
  const value = block[key];
  if (typeof value !== 'string') throw invalidAt(`${path}.${key}`, 'must be a string');
  return value;
}

function arrayAt(block: Block, key: string, path: string): unknown[] {
  const value = block[key];
  if (!Array.isArray(value)) throw invalidAt(`${path}.${key}`, 'must be an array');
  return value;
}

/** A nested block: an object with a `type`. */
function blockAt(value: unknown, path: string): Block {
  if (!isJsonObject(value) || typeof value.type !== 'string') throw invalidAt(path, 'must be an object with a type');
  return value;
}

/** `cache_control` is kept with the part, for a dialect that has it (docs/api.md 2.9). */
export function extrasOf(block: Block): { extras?: PartExtras } {
  const cacheControl = block.cache_control;
  return cacheControl === undefined || cacheControl === null ? {} : { extras: { cache_control: cacheControl } };
}

export function textPartOf(block: Block, path: string): ContentPart {
  return { type: 'text', text: stringAt(block, 'text', path), ...extrasOf(block) };
}

function sourceAt(block: Block, path: string): Block {
  const source = block.source;
  if (!isJsonObject(source)) throw invalidAt(`${path}.source`, 'must be an object');
  return source;
}

/**
 * A base64 or URL source (at `path`). A `file` source names a file stored at Anthropic that no
 * other provider can read, and dropping it would answer another question than the one asked: 400.
 */
function mediaSourceOf(source: Block, path: string): Source {
  switch (source.type) {
    case 'base64':
      return { kind: 'base64', mediaType: stringAt(source, 'media_type', path), data: stringAt(source, 'data', path) };
    case 'url':
      return { kind: 'url', url: stringAt(source, 'url', path) };
    case 'file':
      throw invalidAt(path, 'a file_id source can only be read by an Anthropic channel; send the file inline or by URL');
    default:
      throw invalidAt(`${path}.type`, 'is not a source type this model can read');
  }
}

function imagePartOf(block: Block, path: string): ContentPart {
  return { type: 'image', source: mediaSourceOf(sourceAt(block, path), `${path}.source`), ...extrasOf(block) };
}

/** A block of a document's `content` source: text or an image. */
function contentSourcePartOf(block: Block, path: string): ContentPart {
  if (block.type === 'text') return textPartOf(block, path);
  if (block.type === 'image') return imagePartOf(block, path);
  throw invalidAt(`${path}.type`, 'must be text or image');
}

/**
 * A document: a PDF (base64 or URL) or plain text is a file part (plain text as base64
 * `text/plain`, the form content.ts sends back to Anthropic as a text source); a `content` source
 * is its own text and image blocks. `context` and `citations` have no equivalent elsewhere.
 */
function documentPartsOf(block: Block, path: string): ContentPart[] {
  const sourcePath = `${path}.source`;
  const source = sourceAt(block, path);
  if (source.type === 'content') {
    const content = source.content;
    if (typeof content === 'string') return [{ type: 'text', text: content }];
    if (!Array.isArray(content)) throw invalidAt(`${sourcePath}.content`, 'must be a string or an array of text and image blocks');
    return content.map((inner, i) => contentSourcePartOf(blockAt(inner, `${sourcePath}.content.${i}`), `${sourcePath}.content.${i}`));
  }
  const fileSource: Source =
    source.type === 'text'
      ? { kind: 'base64', mediaType: 'text/plain', data: Buffer.from(stringAt(source, 'data', sourcePath), 'utf8').toString('base64') }
      : mediaSourceOf(source, sourcePath);
  const title = block.title;
  return [{ type: 'file', source: fileSource, ...(typeof title === 'string' && title !== '' ? { name: title } : {}), ...extrasOf(block) }];
}

/** A search result (retrieved text the client supplies) as text: its title, source, then its texts. */
function searchResultPartOf(block: Block, path: string): ContentPart {
  const texts = arrayAt(block, 'content', path).map((inner, i) => {
    const innerPath = `${path}.content.${i}`;
    return stringAt(blockAt(inner, innerPath), 'text', innerPath);
  });
  const text = [stringAt(block, 'title', path), stringAt(block, 'source', path), ...texts].join('\n\n');
  return { type: 'text', text, ...extrasOf(block) };
}

/**
 * The parts of a block of what a user or a tool gives the model (text, image, document, search
 * result); undefined for other types.
 */
function inputPartsOf(block: Block, path: string): ContentPart[] | undefined {
  switch (block.type) {
    case 'text':
      return [textPartOf(block, path)];
    case 'image':
      return [imagePartOf(block, path)];
    case 'document':
      return documentPartsOf(block, path);
    case 'search_result':
      return [searchResultPartOf(block, path)];
    default:
      return undefined;
  }
}

/**
 * A tool result's content: a string, or input blocks; other blocks (tool references, types added
 * later) are dropped.
 */
function toolResultContentOf(block: Block, path: string): ContentPart[] {
  const content = block.content;
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalidAt(`${path}.content`, 'must be a string or an array of content blocks');
  return content.flatMap((inner, i) => {
    const innerPath = `${path}.content.${i}`;
    return inputPartsOf(blockAt(inner, innerPath), innerPath) ?? [];
  });
}

function toolUsePartOf(block: Block, path: string): ContentPart {
  const input = block.input;
  if (!isJsonObject(input)) throw invalidAt(`${path}.input`, 'must be an object');
  return {
    type: 'tool_call',
    id: stringAt(block, 'id', path),
    name: stringAt(block, 'name', path),
    arguments: JSON.stringify(input),
    ...extrasOf(block),
  };
}

/**
 * The parts of one block. Blocks no other provider can take are dropped: server-tool calls and
 * their results in the history (`server_tool_use`, `web_search_tool_result`, ...; the upstream
 * cannot run or read them, and the assistant's text after them carries what they found), tool
 * references, and block types added later. A thinking block's empty signature (reasoning another
 * provider made, as client-response.ts writes it) is none.
 */
function partsOfBlock(block: Block, path: string): ContentPart[] {
  const input = inputPartsOf(block, path);
  if (input) return input;
  switch (block.type) {
    case 'thinking': {
      const text = stringAt(block, 'thinking', path);
      const signature = block.signature;
      return [{ type: 'reasoning', text, ...(typeof signature === 'string' && signature !== '' ? { signature } : {}) }];
    }
    case 'redacted_thinking':
      return [{ type: 'redacted_reasoning', data: stringAt(block, 'data', path) }];
    case 'tool_use':
      return [toolUsePartOf(block, path)];
    case 'tool_result': {
      const isError = block.is_error === true ? { isError: true } : {};
      return [
        { type: 'tool_result', toolCallId: stringAt(block, 'tool_use_id', path), content: toolResultContentOf(block, path), ...isError, ...extrasOf(block) },
      ];
    }
    default:
      return [];
  }
}

/**
 * One Anthropic message as internal turns, in order: its tool results (Anthropic puts them in the
 * user's turn) become `tool` turns, the rest a turn of the message's role. A message left without
 * parts is none.
 */
export function turnsOf(message: MessagesMessage, index: number): ChatMessage[] {
  const path = `messages.${index}.content`;
  const parts: ContentPart[] =
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : message.content.flatMap((block, i) => partsOfBlock(block, `${path}.${i}`));
  const turns: ChatMessage[] = [];
  for (const part of parts) {
    const role = part.type === 'tool_result' ? 'tool' : message.role;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(part);
    else turns.push({ role, content: [part] });
  }
  return turns;
}
