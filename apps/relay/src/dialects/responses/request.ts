import { parseOrThrow } from '@modelgate/http';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTokens, estimatePromptTokens, type PromptPieces } from '../../features/relay/tokens';
import { isJsonObject } from '../../core/json';
import { base64FileTokens, IMAGE_TOKENS } from '../openai/chat-request';
import { DEFAULT_MAX_TOKENS } from '../openai/completion-request';
import { type ResponsesBody, type ResponsesInputItem, responsesSchema } from '@modelgate/schemas/relay';

export type { ResponsesBody, ResponsesInputItem } from '@modelgate/schemas/relay';

/** Parses the raw body once; the parsed object keeps every field the client sent. */
export function parseResponsesRequest(raw: Buffer): ResponsesBody {
  const body = parseJsonObject(raw);
  parseOrThrow(responsesSchema, body, { storedFields: ['model'] });
  return body as ResponsesBody;
}

/** One content part of a message or a tool output, loosely read: only what it costs is needed. */
function addPart(part: unknown, into: PromptPieces): void {
  if (!isJsonObject(part)) return;
  switch (part.type) {
    case 'input_image':
      into.mediaTokens += IMAGE_TOKENS;
      return;
    case 'input_file':
      // A file by URL or id is sized by the upstream alone.
      if (typeof part.file_data === 'string') into.mediaTokens += base64FileTokens(part.file_data);
      return;
  }
  const text = part.text ?? part.refusal;
  if (typeof text === 'string') into.texts.push(text);
}

/** A message's content or a tool call's output: a string or an array of parts. */
function addContent(content: unknown, into: PromptPieces): void {
  if (typeof content === 'string') into.texts.push(content);
  else if (Array.isArray(content)) for (const part of content) addPart(part, into);
}

function addStrings(into: PromptPieces, ...values: unknown[]): void {
  for (const value of values) if (typeof value === 'string') into.texts.push(value);
}

function addItem(item: ResponsesInputItem, into: PromptPieces): void {
  switch (item.type) {
    case undefined:
    case null:
    case 'message':
      addContent(item.content, into);
      break;
    case 'function_call':
      addStrings(into, item.name, item.arguments);
      break;
    case 'custom_tool_call':
      addStrings(into, item.name, item.input);
      break;
    case 'function_call_output':
    case 'custom_tool_call_output':
      addContent(item.output, into);
      break;
    case 'reasoning':
      if (Array.isArray(item.summary)) for (const part of item.summary) addPart(part, into);
      if (Array.isArray(item.content)) for (const part of item.content) addPart(part, into);
      break;
  }
}

/**
 * Collects the prompt without copying it: strings are referenced, media only sized (a 1 MB image
 * costs nothing to estimate). Tool definitions and a JSON schema reach the model as JSON text.
 * Items of OpenAI's hosted tools count nothing here: their cost is the upstream's to report.
 */
function promptPiecesOf(body: ResponsesBody): PromptPieces {
  const pieces: PromptPieces = { texts: [], mediaTokens: 0 };
  if (body.instructions) pieces.texts.push(body.instructions);
  if (typeof body.input === 'string') pieces.texts.push(body.input);
  else for (const item of body.input ?? []) addItem(item, pieces);
  if (body.tools && body.tools.length > 0) pieces.texts.push(JSON.stringify(body.tools));
  const format = body.text?.format;
  if (format?.type === 'json_schema') pieces.texts.push(JSON.stringify(format.schema));
  return pieces;
}

/**
 * The reservation's token estimate (docs/api.md 2.5): the prompt by size (no tokenizer), plus
 * `max_output_tokens` (default 4096).
 */
export function estimateResponses(body: ResponsesBody): { promptTokens: number; completionTokens: number } {
  return { promptTokens: estimatePromptTokens(promptPiecesOf(body)), completionTokens: body.max_output_tokens ?? DEFAULT_MAX_TOKENS };
}

/** The prompt's tokens as charged when the upstream reports none. */
export function countResponsesPromptTokens(body: ResponsesBody): number {
  return countPromptTokens(promptPiecesOf(body));
}
