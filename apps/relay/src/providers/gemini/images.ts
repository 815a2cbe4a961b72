import { AppError } from '@modelgate/errors';
import { isJsonObject } from '../../core/json';
import { UpstreamFailure } from '../../features/upstream/client';
import type { ImageRequest, ImageResponse } from '../../core/media';
import type { UpstreamCall, UpstreamTarget } from '../../core/provider';
import { generateContentMethod, geminiCall } from './call';
import { partsOfCandidate } from './output';
import { usageOf } from './usage';
import type { GeminiContent } from './wire';

/** The aspect ratios every Gemini image model draws (`imageConfig.aspectRatio`). */
const ASPECT_RATIOS = ([[1, 1], [2, 3], [3, 2], [3, 4], [4, 3], [4, 5], [5, 4], [9, 16], [16, 9], [21, 9]] as const).map(
  ([width, height]) => ({ name: `${width}:${height}`, ratio: width / height }),
);

/**
 * How far a size may be from the ratio it asks: Gemini's own sizes (1344x768 for 16:9, 1184x864 for
 * 4:3) and dall-e-3's wide ones (1792x1024) are up to 3% off theirs. Under half the gap between the
 * two closest ratios (5:4 and 4:3), so a size never matches two.
 */
const RATIO_TOLERANCE = 0.03;

const SIZE = /^(\d+)x(\d+)$/;

/** The aspect ratio a `WxH` size asks, when Gemini draws it. */
function aspectRatioOf(size: string): string | undefined {
  const match = SIZE.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!(width > 0 && height > 0)) return undefined;
  return ASPECT_RATIOS.find(({ ratio }) => Math.abs(width / height / ratio - 1) <= RATIO_TOLERANCE)?.name;
}

/** `imageConfig` for OpenAI's `size`: none for `auto` or no size, the model then picks. */
function imageConfigOf(size: string | undefined): { aspectRatio: string } | undefined {
  if (size === undefined || size === 'auto') return undefined;
  const aspectRatio = aspectRatioOf(size);
  if (!aspectRatio) {
    const accepted = ASPECT_RATIOS.map(({ name }) => name).join(', ');
    throw new AppError('invalid_request', `size: a Gemini image model draws no ${size}; it takes auto or a WxH of ratio ${accepted}`, { param: 'size' });
  }
  return { aspectRatio };
}

/**
 * An image generation request as a `generateContent` body, which Vertex AI's Gemini models take
 * too (docs/api.md 2.13). Gemini image models answer one candidate only (they refuse
 * `candidateCount` above 1), so `n` above 1 is refused; `quality` has no counterpart and is dropped.
 */
export function generateImagesBody(request: ImageRequest): Record<string, unknown> {
  if (request.n > 1) throw new AppError('invalid_request', 'n: a Gemini image model draws one image per request', { param: 'n' });
  const contents: GeminiContent[] = [{ role: 'user', parts: [{ text: request.prompt }] }];
  const imageConfig = imageConfigOf(request.size);
  return { contents, generationConfig: { responseModalities: ['TEXT', 'IMAGE'], ...(imageConfig && { imageConfig }) } };
}

/** An image generation request as `generateContent`. */
export function imagesRequest(channel: UpstreamTarget, upstreamModel: string, request: ImageRequest): UpstreamCall {
  return geminiCall(channel, upstreamModel, generateContentMethod(false), generateImagesBody(request));
}

function malformed(): UpstreamFailure {
  return new UpstreamFailure('other', 'the upstream answered with a malformed GenerateContentResponse');
}

/** Why an answer without images has none, in Gemini's words: the block reason, else the finish reason and the model's message. */
function noImage(body: Record<string, unknown>, candidates: Record<string, unknown>[], text: string): AppError {
  const feedback = body.promptFeedback;
  if (isJsonObject(feedback) && typeof feedback.blockReason === 'string') {
    const detail = typeof feedback.blockReasonMessage === 'string' ? `: ${feedback.blockReasonMessage}` : '';
    return new AppError('invalid_request', `the upstream refused the prompt (${feedback.blockReason})${detail}`, { param: 'prompt' });
  }
  const [candidate] = candidates;
  const reason = typeof candidate?.finishReason === 'string' ? ` (finish reason ${candidate.finishReason})` : '';
  const message = typeof candidate?.finishMessage === 'string' && candidate.finishMessage !== '' ? candidate.finishMessage : text;
  return new AppError('invalid_request', `the model answered without an image${reason}${message === '' ? '' : `: ${message}`}`);
}

/**
 * A `generateContent` answer of an image model: every image part of the candidates (thoughts,
 * interim drafts, left out), their text joined, usage priced like chat (docs/api.md 2.13). An answer
 * without an image (a blocked prompt, a filtered or text-only answer) is the client's 400, naming why.
 */
export function imagesResponse(body: unknown): ImageResponse {
  if (!isJsonObject(body)) throw malformed();
  const candidates = body.candidates ?? [];
  if (!Array.isArray(candidates) || !candidates.every(isJsonObject)) throw malformed();
  const images: ImageResponse['images'] = [];
  let text = '';
  for (const part of candidates.flatMap(partsOfCandidate)) {
    if (!isJsonObject(part) || part.thought === true) continue;
    const { inlineData } = part;
    if (isJsonObject(inlineData) && typeof inlineData.mimeType === 'string' && inlineData.mimeType.startsWith('image/')) {
      if (typeof inlineData.data !== 'string' || inlineData.data === '') throw malformed();
      images.push({ b64: inlineData.data, mediaType: inlineData.mimeType });
    } else if (typeof part.text === 'string') {
      text += part.text;
    }
  }
  if (images.length === 0) throw noImage(body, candidates, text);
  const usage = usageOf(body.usageMetadata);
  return {
    images,
    ...(text !== '' && { text }),
    ...(usage && { usage: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens } }),
  };
}
