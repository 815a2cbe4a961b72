import { parseOrThrow } from '@modelgate/http';
import { z } from 'zod';
import { DEFAULT_MAX_TOKENS } from '../completions/request';
import { parseJsonObject } from '../../features/relay/json-body';
import { countPromptTokens, estimatePromptTokens, type PromptPieces } from '../../features/relay/tokens';

/*
 * docs/api.md 2.7: OpenAI's chat request. Every object is loose (fields the gateway does not know
 * are kept and forwarded); the fields the relay reads or translates are checked.
 */

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string().min(1), detail: z.string().nullish() }),
});
const audioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string().min(1) }),
});
const filePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({ file_data: z.string().nullish(), file_id: z.string().nullish(), filename: z.string().nullish() }),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

const userPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);

/** A content field: a string or an array of the parts the role allows. */
function contentOf<P extends z.ZodType>(part: P, parts: string) {
  return z.union([z.string(), z.array(part)], { error: `must be a string or an array of ${parts} parts` });
}

const textContent = contentOf(textPart, 'text');

const functionToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
const customToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('custom'),
  custom: z.looseObject({ name: z.string().min(1), input: z.string() }),
});

const instructionMessage = z.looseObject({
  role: z.enum(['system', 'developer']),
  content: textContent,
  name: z.string().nullish(),
});
const userMessage = z.looseObject({
  role: z.literal('user'),
  content: contentOf(userPart, 'text, image_url, input_audio or file'),
  name: z.string().nullish(),
});
const assistantMessage = z.looseObject({
  role: z.literal('assistant'),
  // null (or absent) when the turn is only tool calls.
  content: contentOf(z.discriminatedUnion('type', [textPart, refusalPart]), 'text or refusal').nullish(),
  name: z.string().nullish(),
  tool_calls: z.array(z.discriminatedUnion('type', [functionToolCall, customToolCall])).nullish(),
  /** DeepSeek-style reasoning of an earlier turn (docs/api.md 2.6). */
  reasoning_content: z.string().nullish(),
  refusal: z.string().nullish(),
});
const toolMessage = z.looseObject({
  role: z.literal('tool'),
  content: textContent,
  tool_call_id: z.string(),
});

const chatMessage = z.discriminatedUnion('role', [instructionMessage, userMessage, assistantMessage, toolMessage]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});
const customTool = z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string().min(1) }) });

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
    z.looseObject({ type: z.literal('custom'), custom: z.looseObject({ name: z.string().min(1) }) }),
    z.looseObject({
      type: z.literal('allowed_tools'),
      allowed_tools: z.looseObject({ mode: z.enum(['auto', 'required']), tools: z.array(z.unknown()) }),
    }),
  ]),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

const chatCompletionSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(chatMessage).min(1),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  seed: z.number().int().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  tools: z.array(z.discriminatedUnion('type', [functionTool, customTool])).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  // A string, not an enum: OpenAI adds levels, and an OpenAI channel must receive new ones.
  reasoning_effort: z.string().nullish(),
  user: z.string().nullish(),
});

export type ChatCompletionBody = z.output<typeof chatCompletionSchema>;
export type ChatCompletionMessage = ChatCompletionBody['messages'][number];

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

type PromptPart = z.output<typeof userPart> | z.output<typeof refusalPart>;

function addPart(part: PromptPart, into: PromptPieces): void {
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
