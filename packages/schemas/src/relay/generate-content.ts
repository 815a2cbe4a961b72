import { z } from 'zod';

/** docs/api.md 2.3: `contents` is required; everything else is Google's business and forwarded as is. */
export const generateContentSchema = z.looseObject({
  contents: z.array(z.unknown()).min(1),
  generationConfig: z
    .looseObject({
      maxOutputTokens: z.number().int().min(1).nullish(),
      candidateCount: z.number().int().min(1).nullish(),
    })
    .nullish(),
});

export type GenerateContentRequest = z.output<typeof generateContentSchema>;
