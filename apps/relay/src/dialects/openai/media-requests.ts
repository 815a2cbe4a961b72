import { parseOrThrow } from '@modelgate/http';
import {
  type ImageGenerationBody,
  imageGenerationSchema,
  type ModerationBody,
  moderationSchema,
  type RerankBody,
  rerankSchema,
  type SpeechBody,
  speechSchema,
} from '@modelgate/schemas/relay';
import type { z } from 'zod';
import { parseJsonObject } from '../../features/relay/json-body';
import { estimateTextTokens } from '../../features/relay/tokens';

/*
 * The OpenAI-dialect media requests (docs/api.md 2.13) as the relay reads them: parsed once, and
 * what is known of their units and tokens before the call (the reservation, docs/api.md 2.14).
 */

/** OpenAI's models when a request names none. */
export const DEFAULT_IMAGE_MODEL = 'dall-e-2';
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

function parseJson<S extends z.ZodType>(schema: S, raw: Buffer): z.output<S> {
  const body = parseJsonObject(raw);
  parseOrThrow(schema, body, { storedFields: ['model'] });
  return body as z.output<S>;
}

export const parseImageGeneration = (raw: Buffer): ImageGenerationBody => parseJson(imageGenerationSchema, raw);
export const parseSpeech = (raw: Buffer): SpeechBody => parseJson(speechSchema, raw);
export const parseModeration = (raw: Buffer): ModerationBody => parseJson(moderationSchema, raw);
export const parseRerank = (raw: Buffer): RerankBody => parseJson(rerankSchema, raw);

/** A multipart form's text fields, checked like a JSON body (400 naming the field). */
export function parseFormFields<S extends z.ZodType>(schema: S, fields: ReadonlyMap<string, string>): z.output<S> {
  return parseOrThrow(schema, Object.fromEntries(fields), { storedFields: ['model'] });
}

/** What an image request asks for, as its price and reservation read it. */
export interface ImageAsk {
  n: number;
  size?: string | null;
  quality?: string | null;
}

const SIZE = /^(\d+)x(\d+)$/;
const ONE_MEGAPIXEL = 1024 * 1024;

/** True for a size over 1024x1024 pixels (an `auto` or unknown size is not). */
function isLarge(size: string | null | undefined): boolean {
  const match = SIZE.exec(size ?? '');
  return match !== null && Number(match[1]) * Number(match[2]) > ONE_MEGAPIXEL;
}

/**
 * docs/api.md 2.14: one unit per image, one more for `hd` / `high` quality, one more for a size
 * larger than 1024x1024.
 */
export function imageUnits({ n, size, quality }: ImageAsk): number {
  return n * (1 + (quality === 'hd' || quality === 'high' ? 1 : 0) + (isLarge(size) ? 1 : 0));
}

/**
 * gpt-image output tokens per image by quality, at 1024x1024 and at the larger sizes (OpenAI's
 * figures); `auto` is reserved as high.
 */
const GPT_IMAGE_OUTPUT_TOKENS: Readonly<Record<string, readonly [number, number]>> = {
  low: [272, 408],
  medium: [1056, 1584],
  high: [4160, 6240],
};

/** A Gemini image model's output tokens per image up to 1024x1024 (Google's figure). */
const GEMINI_IMAGE_OUTPUT_TOKENS = 1290;

/** The reservation's token estimate of an image request (docs/api.md 2.5): the prompt by size, the images by quality. */
export function estimateImages(model: string, prompt: string, ask: ImageAsk): { promptTokens: number; completionTokens: number } {
  const [square, large] = GPT_IMAGE_OUTPUT_TOKENS[ask.quality ?? 'high'] ?? GPT_IMAGE_OUTPUT_TOKENS.high!;
  const perImage = model.startsWith('gpt-image') ? (isLarge(ask.size) || ask.size === 'auto' || !ask.size ? large : square) : GEMINI_IMAGE_OUTPUT_TOKENS;
  return { promptTokens: estimateTextTokens(prompt), completionTokens: ask.n * perImage };
}

/** Speech input length in characters (code points), the unit of its price (docs/api.md 2.14). */
export function speechCharacters(input: string): number {
  let characters = 0;
  for (const _ of input) characters += 1;
  return characters;
}

/** The texts a rerank request sends: the query and every document. */
export function rerankTexts(body: RerankBody): string[] {
  return [body.query, ...body.documents.map((document) => (typeof document === 'string' ? document : document.text))];
}
