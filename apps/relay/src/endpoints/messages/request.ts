import { parseOrThrow } from '@modelgate/http';
import { z } from 'zod';
import { base64FileTokens, IMAGE_TOKENS } from '../chat-completions/request';
import { parseJsonObject } from '../../features/relay/json-body';
import type { PromptPieces } from '../../features/relay/tokens';
import { isJsonObject, objectOf } from '../../providers/json';

/*
 * docs/api.md 2.9: Anthropic's Messages request. Checked here: the fields routing, billing and the
 * reservation read. Content blocks are only required to be objects with a `type`: an Anthropic
 * channel receives them byte for byte (Anthropic checks them, and knows block types the gateway
 * does not), and the translation checks the fields of each block it converts (400 naming the
 * block), so a 1 MB agent prompt is not walked twice.
 */

export const contentBlockSchema = z.looseObject({ type: z.string().min(1) });
export type MessagesContentBlock = z.output<typeof contentBlockSchema>;

const contentSchema = z.union([z.string(), z.array(contentBlockSchema)], { error: 'must be a string or an array of content blocks' });

const messageSchema = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: contentSchema,
});

/** A tool: a custom one (`input_schema`) or one of Anthropic's server tools (`type`, e.g. web search). */
const toolSchema = z.looseObject({
  name: z.string().min(1),
  type: z.string().nullish(),
  description: z.string().nullish(),
  input_schema: z.record(z.string(), z.unknown()).nullish(),
});

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal('none') }),
]);

/** `enabled` with a budget, `disabled`, or a mode Anthropic adds later (passed on as is). */
const thinkingSchema = z.looseObject({ type: z.string().min(1), budget_tokens: z.number().int().min(1).nullish() });

/** What `/v1/messages` and `/v1/messages/count_tokens` share (count_tokens has no `max_tokens`). */
const promptShape = {
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  system: z.union([z.string(), z.array(contentBlockSchema)], { error: 'must be a string or an array of text blocks' }).nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  thinking: thinkingSchema.nullish(),
};

const messagesSchema = z.looseObject({
  ...promptShape,
  max_tokens: z.number().int().min(1),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
});

const countTokensSchema = z.looseObject(promptShape);

export type MessagesBody = z.output<typeof messagesSchema>;
export type MessagesMessage = MessagesBody['messages'][number];
export type CountTokensBody = z.output<typeof countTokensSchema>;

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
