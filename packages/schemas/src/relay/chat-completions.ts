import { z } from 'zod';

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

export const chatCompletionSchema = z.looseObject({
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
/** A content part of a user message, or an assistant's refusal: the parts a prompt is made of. */
export type ChatPromptPart = z.output<typeof userPart> | z.output<typeof refusalPart>;
