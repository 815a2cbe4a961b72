import { z } from 'zod';

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

export const messagesSchema = z.looseObject({
  ...promptShape,
  max_tokens: z.number().int().min(1),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
});

export const countTokensSchema = z.looseObject(promptShape);

export type MessagesBody = z.output<typeof messagesSchema>;
export type MessagesMessage = MessagesBody['messages'][number];
export type CountTokensBody = z.output<typeof countTokensSchema>;
