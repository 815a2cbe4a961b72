import { z } from 'zod';

const text = z.string().min(1);
const tokenIds = z.array(z.number().int().min(0)).min(1);

/** docs/api.md 2.8; other fields are kept and forwarded to OpenAI-compatible channels. */
export const embeddingsSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([text, z.array(text).min(1), tokenIds, z.array(tokenIds).min(1)], {
    error: 'must be a non-empty string, array of strings, array of token ids or array of token-id arrays',
  }),
  dimensions: z.number().int().min(1).nullish(),
  encoding_format: z.enum(['float', 'base64']).nullish(),
});

export type EmbeddingsBody = z.output<typeof embeddingsSchema>;
