import { z } from 'zod';

const tokenIds = z.array(z.number().int().min(0));

/** docs/api.md 2.1; other fields are not checked and are forwarded untouched. */
export const completionRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds)]),
  max_tokens: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  n: z.number().int().min(1).max(128).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  suffix: z.string().nullish(),
  echo: z.boolean().nullish(),
});

export type CompletionRequest = z.output<typeof completionRequestSchema> & Record<string, unknown>;
