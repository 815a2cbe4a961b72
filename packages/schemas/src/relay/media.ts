import { z } from 'zod';

/*
 * docs/api.md 2.13: the media and other non-chat surfaces. Fields the relay does not read are kept
 * and forwarded; the ones it reads (for the reservation, docs/api.md 2.14) are checked here.
 */

const imageCount = z.number().int().min(1).max(10);

/** `POST /v1/images/generations`. OpenAI's default model when none is named is dall-e-2. */
export const imageGenerationSchema = z.looseObject({
  model: z.string().min(1).nullish(),
  prompt: z.string().min(1),
  n: imageCount.nullish(),
  size: z.string().min(1).nullish(),
  quality: z.string().min(1).nullish(),
  response_format: z.enum(['url', 'b64_json']).nullish(),
  stream: z.boolean().nullish(),
});
export type ImageGenerationBody = z.output<typeof imageGenerationSchema>;

/** A multipart field's text as an integer in [min, max]. */
function integerField(min: number, max: number) {
  return z
    .string()
    .regex(/^\s*\d+\s*$/, { error: 'must be an integer' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

const booleanField = z.enum(['true', 'false'], { error: 'must be true or false' }).transform((value) => value === 'true');

/**
 * `POST /v1/images/edits` (multipart), its text fields; the files are `image` (or `image[]`) and
 * `mask`.
 */
export const imageEditFieldsSchema = z.looseObject({
  model: z.string().min(1).optional(),
  prompt: z.string().min(1),
  n: integerField(1, 10).optional(),
  size: z.string().min(1).optional(),
  quality: z.string().min(1).optional(),
  response_format: z.enum(['url', 'b64_json']).optional(),
  stream: booleanField.optional(),
});
export type ImageEditFields = z.output<typeof imageEditFieldsSchema>;

/** `POST /v1/audio/speech`: audio bytes back, or server-sent events with `stream_format: "sse"`. */
export const speechSchema = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1).max(4096),
  voice: z.union([z.string().min(1), z.looseObject({ id: z.string().min(1) })], { error: 'must be a voice name or {"id": ...}' }),
  response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']).nullish(),
  speed: z.number().min(0.25).max(4).nullish(),
  instructions: z.string().nullish(),
  stream_format: z.enum(['sse', 'audio']).nullish(),
});
export type SpeechBody = z.output<typeof speechSchema>;

/** `POST /v1/audio/transcriptions` and `/v1/audio/translations` (multipart), their text fields; the file is `file`. */
export const transcriptionFieldsSchema = z.looseObject({
  model: z.string().min(1),
  language: z.string().min(1).optional(),
  prompt: z.string().optional(),
  response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).optional(),
  temperature: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*$/, { error: 'must be a number' })
    .transform(Number)
    .pipe(z.number().min(0).max(1))
    .optional(),
  stream: booleanField.optional(),
});
export type TranscriptionFields = z.output<typeof transcriptionFieldsSchema>;

const moderationPart = z.union([
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1) }) }),
]);

/** `POST /v1/moderations`. OpenAI's default model when none is named is omni-moderation-latest. */
export const moderationSchema = z.looseObject({
  model: z.string().min(1).nullish(),
  input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1), z.array(moderationPart).min(1)], {
    error: 'must be a non-empty string, array of strings, or array of text / image_url parts',
  }),
});
export type ModerationBody = z.output<typeof moderationSchema>;

/** `POST /v1/rerank`, as Jina and Cohere take it. */
export const rerankSchema = z.looseObject({
  model: z.string().min(1),
  query: z.string().min(1),
  documents: z.array(z.union([z.string(), z.looseObject({ text: z.string() })]), { error: 'must be an array of strings or {"text": ...}' }).min(1).max(10_000),
  top_n: z.number().int().min(1).nullish(),
  return_documents: z.boolean().nullish(),
});
export type RerankBody = z.output<typeof rerankSchema>;
