import { z } from 'zod';

/*
 * docs/api.md 2.10: OpenAI's Responses request. Checked here: the fields routing, billing and the
 * reservation read. Input items are only required to be objects (a message may omit `type`): a
 * native channel receives the client's bytes, and the translation checks the fields of each item
 * it converts (400 naming the item).
 */

export const inputItemSchema = z.looseObject({ type: z.string().min(1).nullish(), role: z.string().nullish() });
export type ResponsesInputItem = z.output<typeof inputItemSchema>;

/** A function tool, or a built-in one (`web_search`, `file_search`, ...: kept for native channels). */
const toolSchema = z.looseObject({
  type: z.string().min(1),
  name: z.string().min(1).nullish(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.string().min(1), name: z.string().min(1).nullish() }),
]);

const formatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);

export const responsesSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(inputItemSchema)], { error: 'must be a string or an array of input items' }).nullish(),
  instructions: z.string().nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  // `effort` a string, not an enum: OpenAI adds levels, and a native channel must receive new ones.
  reasoning: z.looseObject({ effort: z.string().nullish(), summary: z.string().nullish() }).nullish(),
  text: z.looseObject({ format: formatSchema.nullish() }).nullish(),
  stream: z.boolean().nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().min(1).nullish(),
  // The answer of a background response is fetched later, outside any call the relay could bill:
  // refused until it can be (docs/api.md 2.10).
  background: z.literal(false, { error: 'background responses are not supported (they cannot be billed); send false or leave it out' }).nullish(),
  include: z.array(z.string()).nullish(),
  user: z.string().nullish(),
});

export type ResponsesBody = z.output<typeof responsesSchema>;
