import { parseOrThrow } from '@modelgate/http';
import { DEFAULT_MAX_TOKENS } from './completion-request';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTokens, estimatePromptTokens, type PromptPieces } from '../../features/relay/tokens';
import { type ChatCompletionBody, chatCompletionSchema, type ChatPromptPart } from '@modelgate/schemas/relay';

export type { ChatCompletionBody, ChatCompletionMessage } from '@modelgate/schemas/relay';

/**
 * Parses the raw body once; the parsed object keeps every field the client sent. Only `model` is
 * stored (on the consume row), so only it is refused with a NUL; messages may hold anything.
 */
export function parseChatCompletionRequest(raw: Buffer): ChatCompletionBody {
  const body = parseJsonObject(raw);
  parseOrThrow(chatCompletionSchema, body, { storedFields: ['model'] });
  return body as ChatCompletionBody;
}

/**
 * Tokens reserved and charged for one image when the upstream reports none (docs/api.md 2.5): the
 * image's size is not known without decoding it, so the count is above the largest any provider
 * bills for one image at its default detail (OpenAI high detail: 85 + 8 tiles x 170 = 1,445;
 * Anthropic: about 1,600 at its 1.15-megapixel limit; Gemini: 258 per tile).
 */
export const IMAGE_TOKENS = 1_700;

/**
 * Audio bytes per token: audio of 32 kbit/s (4,000 bytes a second, low for speech mp3; wav is far
 * larger) at 32 tokens a second (Gemini's rate; OpenAI counts fewer), so the count errs high.
 */
const AUDIO_BYTES_PER_TOKEN = 125;

/** Document bytes per token: a PDF is charged as if each 4 of its bytes were a token of text. */
const FILE_BYTES_PER_TOKEN = 4;

/** The bytes a base64 text decodes to, without decoding it. */
function base64Bytes(data: string): number {
  return Math.floor((data.length * 3) / 4);
}

/** Tokens of a base64 document (a PDF ...) by its size, without decoding it. */
export function base64FileTokens(data: string): number {
  return Math.ceil(base64Bytes(data) / FILE_BYTES_PER_TOKEN);
}

function addPart(part: ChatPromptPart, into: PromptPieces): void {
  switch (part.type) {
    case 'text':
      into.texts.push(part.text);
      break;
    case 'refusal':
      into.texts.push(part.refusal);
      break;
    case 'image_url':
      into.mediaTokens += IMAGE_TOKENS;
      break;
    case 'input_audio':
      into.mediaTokens += Math.ceil(base64Bytes(part.input_audio.data) / AUDIO_BYTES_PER_TOKEN);
      break;
    case 'file':
      into.mediaTokens += base64FileTokens(part.file.file_data ?? '');
      break;
  }
}

/**
 * Collects the prompt without copying it: strings are referenced, media only sized. Tool
 * definitions and a JSON schema reach the model as JSON text, and are counted as such.
 */
function promptPiecesOf(body: ChatCompletionBody): PromptPieces {
  const pieces: PromptPieces = { texts: [], mediaTokens: 0 };
  for (const message of body.messages) {
    const content = message.content;
    if (typeof content === 'string') pieces.texts.push(content);
    else if (content) for (const part of content) addPart(part, pieces);
    if (message.role !== 'assistant') continue;
    if (message.reasoning_content) pieces.texts.push(message.reasoning_content);
    for (const call of message.tool_calls ?? []) {
      if (call.type === 'function') pieces.texts.push(call.function.name, call.function.arguments);
      else pieces.texts.push(call.custom.name, call.custom.input);
    }
  }
  if (body.tools && body.tools.length > 0) pieces.texts.push(JSON.stringify(body.tools));
  if (body.response_format?.type === 'json_schema') pieces.texts.push(JSON.stringify(body.response_format.json_schema));
  return pieces;
}

/**
 * The reservation's token estimate (docs/api.md 2.5): the prompt by size (no tokenizer), plus
 * `max_completion_tokens` (or `max_tokens`, default 4096) per choice.
 */
export function estimateChat(body: ChatCompletionBody): { promptTokens: number; completionTokens: number } {
  const promptTokens = estimatePromptTokens(promptPiecesOf(body));
  const perChoice = body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS;
  return { promptTokens, completionTokens: perChoice * (body.n ?? 1) };
}

/** The prompt's tokens as charged when the upstream reports none (see countPromptTokens). */
export function countChatPromptTokens(body: ChatCompletionBody): number {
  return countPromptTokens(promptPiecesOf(body));
}
