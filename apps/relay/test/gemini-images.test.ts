// /v1/images/generations on a Gemini image model: generateContent with image output (docs/api.md 2.13).
import { AppError } from '@modelgate/errors';
import type { ImageRequest } from '../src/core/media';
import { UpstreamFailure } from '../src/features/upstream/client';
import { geminiProvider } from '../src/providers/gemini';
import { thrownBy } from './thrown';

const CHANNEL = { id: 1, key: 'AIza-images', origin: 'http://upstream.test', pathPrefix: '/google', settings: {} };
const MODEL = 'gemini-2.5-flash-image';
const PNG = 'iVBORw0KGgo=';

function images() {
  const { images: operations } = geminiProvider;
  if (!operations) throw new Error('the Gemini provider has no image generation');
  return operations;
}

const request = (extra: Partial<ImageRequest> = {}): ImageRequest => ({ prompt: 'a red fox in the snow', n: 1, ...extra });
const bodyOf = (extra: Partial<ImageRequest> = {}) => JSON.parse(images().request(CHANNEL, MODEL, request(extra)).body as string) as Record<string, unknown>;

describe('Gemini image request', () => {
  it('asks generateContent for text and image output, with the channel key', () => {
    const call = images().request(CHANNEL, MODEL, request({ quality: 'high' }));
    expect(call.path).toBe('/google/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(call.headers).toEqual({ 'x-goog-api-key': 'AIza-images', 'content-type': 'application/json' });
    // quality has no Gemini counterpart
    expect(JSON.parse(call.body as string)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a red fox in the snow' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'] },
    });
  });

  it.each<[string, string]>([
    ['1024x1024', '1:1'],
    ['512x512', '1:1'],
    ['1536x1024', '3:2'],
    ['1024x1536', '2:3'],
    ['1792x1024', '16:9'],
    ['1024x1792', '9:16'],
    ['1600x900', '16:9'],
    ['2100x900', '21:9'],
    // Gemini's own sizes, a little off their ratios
    ['1344x768', '16:9'],
    ['768x1344', '9:16'],
    ['1184x864', '4:3'],
    ['864x1184', '3:4'],
    ['1152x896', '5:4'],
    ['896x1152', '4:5'],
    ['1248x832', '3:2'],
    ['1536x672', '21:9'],
  ])('size %s asks the aspect ratio %s', (size, aspectRatio) => {
    expect(bodyOf({ size }).generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio } });
  });

  it('lets the model pick the aspect ratio for size auto', () => {
    expect(bodyOf({ size: 'auto' }).generationConfig).toEqual({ responseModalities: ['TEXT', 'IMAGE'] });
  });

  it.each(['1000x700', '4096x1024', '1024x0', '1024', 'large', '1024X1024'])('refuses size %s, which names no aspect ratio Gemini draws', (size) => {
    const refusal = thrownBy(() => images().request(CHANNEL, MODEL, request({ size })));
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'invalid_request', status: 400, param: 'size', message: expect.stringContaining(`no ${size}`) });
  });

  it('refuses n above 1: Gemini image models answer one candidate', () => {
    const refusal = thrownBy(() => images().request(CHANNEL, MODEL, request({ n: 2 })));
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'invalid_request', status: 400, param: 'n' });
  });
});

const usageMetadata = { promptTokenCount: 6, candidatesTokenCount: 1295, totalTokenCount: 1301 };

function answer(parts: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: MODEL, responseId: 'r1', ...extra };
}

describe('Gemini image answer', () => {
  it('reads every image part, the text beside them and the usage', () => {
    const response = images().response(answer([
      { text: 'Here is a fox ' },
      { inlineData: { mimeType: 'image/png', data: PNG } },
      { text: 'in the snow.' },
      { inlineData: { mimeType: 'image/jpeg', data: 'AAAA' } },
    ]));
    expect(response).toEqual({
      images: [{ b64: PNG, mediaType: 'image/png' }, { b64: 'AAAA', mediaType: 'image/jpeg' }],
      text: 'Here is a fox in the snow.',
      usage: { promptTokens: 6, completionTokens: 1295 },
    });
  });

  it('leaves out thoughts, interim images included, and other inline data; counts thought tokens as completion', () => {
    const response = images().response(answer([
      { text: 'Planning the picture.', thought: true },
      { inlineData: { mimeType: 'image/png', data: 'DRAFT' }, thought: true },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'image/png', data: PNG }, thoughtSignature: 'sig' },
    ], { usageMetadata: { ...usageMetadata, thoughtsTokenCount: 100 } }));
    expect(response).toEqual({ images: [{ b64: PNG, mediaType: 'image/png' }], usage: { promptTokens: 6, completionTokens: 1395 } });
  });

  it('has no usage when Gemini reports none it can be billed on', () => {
    expect(images().response(answer([{ inlineData: { mimeType: 'image/png', data: PNG } }], { usageMetadata: undefined })).usage).toBeUndefined();
    expect(images().response(answer([{ inlineData: { mimeType: 'image/png', data: PNG } }], { usageMetadata: { promptTokenCount: -1 } })).usage).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string, string | null]>([
    ['a blocked prompt', { candidates: undefined, promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } }, 'the upstream refused the prompt (PROHIBITED_CONTENT)', 'prompt'],
    [
      'a blocked prompt with its reason (Vertex AI)',
      { candidates: undefined, promptFeedback: { blockReason: 'SAFETY', blockReasonMessage: 'The prompt could not be submitted.' } },
      'the upstream refused the prompt (SAFETY): The prompt could not be submitted.',
      'prompt',
    ],
    ['a filtered image', { candidates: [{ finishReason: 'IMAGE_SAFETY', index: 0 }] }, 'the model answered without an image (finish reason IMAGE_SAFETY)', null],
    [
      'a filtered image with its message',
      { candidates: [{ finishReason: 'NO_IMAGE', finishMessage: 'Unable to show the generated image.', index: 0 }] },
      'the model answered without an image (finish reason NO_IMAGE): Unable to show the generated image.',
      null,
    ],
    [
      'a text-only answer',
      { candidates: [{ content: { role: 'model', parts: [{ text: 'I cannot draw that.' }] }, finishReason: 'STOP', index: 0 }] },
      'the model answered without an image (finish reason STOP): I cannot draw that.',
      null,
    ],
    ['no candidates at all', { candidates: [] }, 'the model answered without an image', null],
  ])('refuses %s as the client\'s 400, naming why', (_, fields, message, param) => {
    const refusal = thrownBy(() => images().response(answer([], fields)));
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'invalid_request', status: 400, message, param });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['candidates that are not a list', { candidates: {} }],
    ['a candidate that is not an object', { candidates: ['x'] }],
    ['an image part without data', answer([{ inlineData: { mimeType: 'image/png' } }])],
  ])('refuses %s as a malformed answer', (_, body) => {
    expect(() => images().response(body)).toThrow(UpstreamFailure);
  });
});
