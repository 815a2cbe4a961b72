import { parseOrThrow } from '@modelgate/http';
import { base64FileTokens, IMAGE_TOKENS } from '../openai/chat-request';
import { parseJsonObject } from '../../features/relay/json-body';
import type { PromptPieces } from '../../features/relay/tokens';
import { isJsonObject, objectOf } from '../../core/json';
import { type CountTokensBody, type MessagesBody, countTokensSchema, messagesSchema } from '@modelgate/schemas/relay';

export type { CountTokensBody, MessagesBody, MessagesContentBlock, MessagesMessage } from '@modelgate/schemas/relay';

/** Parses the raw body once; the parsed object keeps every field the client sent. */
export function parseMessagesRequest(raw: Buffer): MessagesBody {
  const body = parseJsonObject(raw);
  parseOrThrow(messagesSchema, body, { storedFields: ['model'] });
  return body as MessagesBody;
}

export function parseCountTokensRequest(raw: Buffer): CountTokensBody {
  const body = parseJsonObject(raw);
  parseOrThrow(countTokensSchema, body, { storedFields: ['model'] });
  return body as CountTokensBody;
}

/**
 * A content field as the model reads it: a string, or blocks. Nested contents (a tool result's, a
 * content document's) are not checked by the schema: anything else in them counts nothing.
 */
function addContent(content: unknown, into: PromptPieces): void {
  if (typeof content === 'string') into.texts.push(content);
  else if (Array.isArray(content)) for (const block of content) if (isJsonObject(block)) addBlock(block, into);
}

/**
 * A document by its size: base64 (a PDF) and text sources as such, a content source as its blocks;
 * a URL or file id cannot be sized without fetching it and counts as one image (about a page).
 */
function addDocument(source: unknown, into: PromptPieces): void {
  const { type, data, content } = objectOf(source);
  if (type === 'base64' && typeof data === 'string') into.mediaTokens += base64FileTokens(data);
  else if (type === 'text' && typeof data === 'string') into.texts.push(data);
  else if (type === 'content') addContent(content, into);
  else into.mediaTokens += IMAGE_TOKENS;
}

/**
 * One block as the model reads it. Earlier turns' thinking is not read again (Anthropic drops it
 * from the context and does not bill it); block types the gateway does not know (server-tool
 * results, search results ...) count as their JSON text.
 */
function addBlock(block: Record<string, unknown>, into: PromptPieces): void {
  switch (block.type) {
    case 'text':
      if (typeof block.text === 'string') into.texts.push(block.text);
      break;
    case 'image':
      into.mediaTokens += IMAGE_TOKENS;
      break;
    case 'document':
      addDocument(block.source, into);
      break;
    case 'tool_use':
    case 'server_tool_use':
      if (typeof block.name === 'string') into.texts.push(block.name);
      into.texts.push(JSON.stringify(block.input ?? {}));
      break;
    case 'tool_result':
      addContent(block.content, into);
      break;
    case 'thinking':
    case 'redacted_thinking':
      break;
    default:
      into.texts.push(JSON.stringify(block));
  }
}

/**
 * The prompt of a Messages or count_tokens body, walked once without copying: the system prompt,
 * every message's blocks, and the tool definitions as the JSON text the model reads.
 */
export function messagesPromptPieces(body: CountTokensBody): PromptPieces {
  const pieces: PromptPieces = { texts: [], mediaTokens: 0 };
  if (body.system) addContent(body.system, pieces);
  for (const message of body.messages) addContent(message.content, pieces);
  if (body.tools && body.tools.length > 0) pieces.texts.push(JSON.stringify(body.tools));
  return pieces;
}
