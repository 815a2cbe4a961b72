// docs/api.md 2.13, 2.14: `POST /v1/images/generations` and `/v1/images/edits` through the openai
// SDK. OpenAI-compatible and Azure channels get the call as the client sent it (the model mapped,
// an edit's upload streamed as multipart); a Gemini image model, on Gemini or Vertex AI, is asked
// through generateContent and answers `b64_json`. Priced per image (its units) or by the tokens
// reported.
import { randomUUID } from 'node:crypto';
import { CHANNEL_TYPE } from '@modelgate/schemas';
import { createChannel, setOption } from '@modelgate/testing';
import {
  FAKE_FLAGGED_WORD,
  FAKE_GEMINI_IMAGE_TOKENS,
  FAKE_IMAGE_OUTPUT_TOKENS,
  FAKE_PNG,
  FAKE_VERTEX_PROJECT,
  fakeVertexServiceAccount,
  MEDIA_PART_TOKENS,
  type RecordedRequest,
  VERTEX_TOKEN_PATH,
} from '@modelgate/testing/fake-upstream';
import { toFile } from 'openai';
import { expectKeyNotForwarded, recorded } from './chat-support';
import { harness, relaySuite, resetSuite, upstream } from './harness';
import {
  expectNothingCharged,
  expectTokensCharged,
  expectUnitCharged,
  expectUpstreamCall,
  MEDIA_CHANNELS,
  mediaChannel,
  mediaCustomer,
  OPENAI,
  PASS_THROUGH_TYPES,
  sdkFailure,
  setMediaPrices,
  START_QUOTA,
  USD_PER_UNIT,
} from './media-support';

const PROMPT = 'a red fox in the snow';
/** The fakes count a prompt's tokens one per word. */
const PROMPT_TOKENS = 6;
const PNG_BASE64 = FAKE_PNG.toString('base64');
const IMAGE_BYTES = Buffer.alloc(150_000, 7);
const MASK_BYTES = Buffer.alloc(20_000, 9);

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setMediaPrices();
});

describe.each(PASS_THROUGH_TYPES)('images on an %s channel', (_name, type) => {
  const { models } = MEDIA_CHANNELS[type];

  beforeEach(async () => {
    await mediaChannel(type, upstream.url);
    await harness.reloadCaches();
  });

  it('generations: the request passed through with the channel model, its images answered, charged per image', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const answer = await openai.images.generate({ model: 'dall-e-3', prompt: PROMPT, n: 2, size: '1024x1024', response_format: 'b64_json' });
    expect(answer.data).toEqual([
      { b64_json: PNG_BASE64, revised_prompt: PROMPT },
      { b64_json: PNG_BASE64, revised_prompt: PROMPT },
    ]);

    const request = recorded(upstream.requests);
    expectUpstreamCall(request, type, 'images/generations', 'dall-e-3', key);
    expect(request.json).toEqual({ model: models['dall-e-3'], prompt: PROMPT, n: 2, size: '1024x1024', response_format: 'b64_json' });
    await expectUnitCharged(userId, START_QUOTA, { model: 'dall-e-3', usdPerUnit: USD_PER_UNIT['dall-e-3'], units: 2, unit: 'image', billed: { images: 2 } });
  });

  it('generations: a gpt-image model is charged the tokens it reported', async () => {
    const { userId, openai } = await mediaCustomer();
    const answer = await openai.images.generate({ model: 'gpt-image-1', prompt: PROMPT, n: 2, quality: 'high' });
    const completion = 2 * (FAKE_IMAGE_OUTPUT_TOKENS.high ?? 0);
    expect(answer.data).toHaveLength(2);
    expect(answer.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: completion });
    expect(recorded(upstream.requests).json).toMatchObject({ model: models['gpt-image-1'] });
    await expectTokensCharged(userId, START_QUOTA, { model: 'gpt-image-1', prompt: PROMPT_TOKENS, completion, billed: { images: 2 } });
  });

  it('edits: the upload streamed as multipart with the channel model, every field and file as sent', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const answer = await openai.images.edit({
      image: await toFile(IMAGE_BYTES, 'fox.png', { type: 'image/png' }),
      mask: await toFile(MASK_BYTES, 'mask.png', { type: 'image/png' }),
      model: 'gpt-image-1',
      prompt: PROMPT,
      quality: 'low',
      size: '1024x1024',
    });
    expect(answer.data).toEqual([{ b64_json: PNG_BASE64 }]);

    const request = recorded(upstream.requests);
    expectUpstreamCall(request, type, 'images/edits', 'gpt-image-1', key);
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.form).toEqual({
      fields: { model: models['gpt-image-1'], prompt: PROMPT, quality: 'low', size: '1024x1024' },
      files: [
        { name: 'image', filename: 'fox.png', size: IMAGE_BYTES.length, contentType: 'image/png' },
        { name: 'mask', filename: 'mask.png', size: MASK_BYTES.length, contentType: 'image/png' },
      ],
    });
    expect(request.body.includes(IMAGE_BYTES)).toBe(true);
    // The fake reads each uploaded image as MEDIA_PART_TOKENS prompt tokens (the mask is not one).
    await expectTokensCharged(userId, START_QUOTA, {
      model: 'gpt-image-1',
      prompt: PROMPT_TOKENS + MEDIA_PART_TOKENS,
      completion: FAKE_IMAGE_OUTPUT_TOKENS.low ?? 0,
      billed: { images: 1 },
    });
  });

  it('edits: several images go up as `image[]`, a dall-e model is charged per image', async () => {
    const { userId, openai } = await mediaCustomer();
    const images = [await toFile(IMAGE_BYTES, 'a.png', { type: 'image/png' }), await toFile(MASK_BYTES, 'b.png', { type: 'image/png' })];
    const answer = await openai.images.edit({ model: 'dall-e-3', image: images, prompt: PROMPT, n: 3, size: '1024x1024' });
    expect(answer.data).toHaveLength(3);
    expect(recorded(upstream.requests).form).toEqual({
      fields: { model: models['dall-e-3'], prompt: PROMPT, n: '3', size: '1024x1024' },
      files: [
        { name: 'image[]', filename: 'a.png', size: IMAGE_BYTES.length, contentType: 'image/png' },
        { name: 'image[]', filename: 'b.png', size: MASK_BYTES.length, contentType: 'image/png' },
      ],
    });
    await expectUnitCharged(userId, START_QUOTA, { model: 'dall-e-3', usdPerUnit: USD_PER_UNIT['dall-e-3'], units: 3, unit: 'image', billed: { images: 3 } });
  });
});

describe('an image priced per image (docs/api.md 2.14)', () => {
  beforeEach(async () => {
    await mediaChannel(OPENAI, upstream.url, { groups: 'default,vip' });
    await harness.reloadCaches();
  });

  it.each<[string, { n?: number; quality?: 'standard' | 'hd' | 'high'; size?: '1024x1024' | '1792x1024' | '1024x1792' | '512x512' }, number]>([
    ['one image, nothing named', {}, 1],
    ['standard 1024x1024', { n: 1, quality: 'standard', size: '1024x1024' }, 1],
    ['a size under a megapixel', { size: '512x512' }, 1],
    ['hd: one unit more', { quality: 'hd', size: '1024x1024' }, 2],
    ['high: one unit more', { quality: 'high' }, 2],
    ['larger than 1024x1024: one unit more', { size: '1792x1024' }, 2],
    ['three hd portraits: three units each', { n: 3, quality: 'hd', size: '1024x1792' }, 9],
  ])('%s: %j is %d units', async (_name, ask, units) => {
    const { userId, openai } = await mediaCustomer();
    const answer = await openai.images.generate({ model: 'dall-e-3', prompt: PROMPT, ...ask });
    const images = ask.n ?? 1;
    expect(answer.data).toHaveLength(images);
    await expectUnitCharged(userId, START_QUOTA, { model: 'dall-e-3', usdPerUnit: USD_PER_UNIT['dall-e-3'], units, unit: 'image', billed: { images } });
  });

  it("multiplies the units' price by the key group's GroupRatio", async () => {
    await setOption(harness.prisma, 'GroupRatio', { default: 1, vip: 1.5 });
    await harness.reloadCaches();
    const { userId, openai } = await mediaCustomer({ group: 'vip' });
    await openai.images.generate({ model: 'dall-e-3', prompt: PROMPT, quality: 'hd' });
    await expectUnitCharged(userId, START_QUOTA, { model: 'dall-e-3', usdPerUnit: USD_PER_UNIT['dall-e-3'], units: 2, unit: 'image', billed: { images: 1 }, groupRatio: 1.5 });
  });

  it("multiplies reported tokens by the key group's GroupRatio", async () => {
    await setOption(harness.prisma, 'GroupRatio', { default: 1, vip: 1.5 });
    await harness.reloadCaches();
    const { userId, openai } = await mediaCustomer({ group: 'vip' });
    await openai.images.generate({ model: 'gpt-image-1', prompt: PROMPT, quality: 'medium' });
    await expectTokensCharged(userId, START_QUOTA, {
      model: 'gpt-image-1',
      prompt: PROMPT_TOKENS,
      completion: FAKE_IMAGE_OUTPUT_TOKENS.medium ?? 0,
      billed: { images: 1 },
      groupRatio: 1.5,
    });
  });
});

const GEMINI_IMAGE_MODEL = 'gemini-2.5-flash-image';
const GEMINI_KEY = 'gemini-upstream-images-secret';
const VERTEX_MODEL_PATH = `/v1/projects/${FAKE_VERTEX_PROJECT}/locations/global/publishers/google/models/${GEMINI_IMAGE_MODEL}:generateContent`;

describe.each([
  ['Gemini (24)', CHANNEL_TYPE.gemini],
  ['Vertex AI (41)', CHANNEL_TYPE.vertex],
] as const)('a Gemini image model on a %s channel', (_name, type) => {
  beforeEach(async () => {
    // A fresh service account (client_id) per test: channel ids restart, cached tokens must not carry over.
    const key = type === CHANNEL_TYPE.gemini ? GEMINI_KEY : JSON.stringify({ ...(JSON.parse(fakeVertexServiceAccount(upstream.url)) as object), client_id: randomUUID() });
    await createChannel(harness.prisma, { type, baseUrl: upstream.url, key, models: GEMINI_IMAGE_MODEL });
    await harness.reloadCaches();
  });

  /** The model calls the channel made (Vertex AI's token exchanges left out), each with the channel's credential. */
  function modelCalls(clientKey: string): RecordedRequest[] {
    const calls = upstream.requests.filter((request) => request.path !== VERTEX_TOKEN_PATH);
    for (const request of calls) {
      if (type === CHANNEL_TYPE.gemini) {
        expect(request.url).toBe(`/v1beta/models/${GEMINI_IMAGE_MODEL}:generateContent`);
        expect(request.headers['x-goog-api-key']).toBe(GEMINI_KEY);
      } else {
        expect(request.url).toBe(VERTEX_MODEL_PATH);
        expect(request.headers.authorization).toMatch(/^Bearer ya29\.fake\./);
      }
      expectKeyNotForwarded(request, clientKey);
    }
    return calls;
  }

  it('asks generateContent for an image at the aspect ratio of the size, answers it as b64_json, charged the tokens reported', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const answer = await openai.images.generate({ model: GEMINI_IMAGE_MODEL, prompt: PROMPT, size: '1792x1024' });
    // The fake answers a text piece beside the image: one candidate token more.
    const completion = 1 + FAKE_GEMINI_IMAGE_TOKENS;
    expect(answer).toMatchObject({
      data: [{ b64_json: PNG_BASE64 }],
      output_format: 'png',
      usage: { input_tokens: PROMPT_TOKENS, output_tokens: completion, total_tokens: PROMPT_TOKENS + completion },
    });

    const [request, ...more] = modelCalls(key);
    expect(more).toEqual([]);
    expect(request?.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: PROMPT }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '16:9' } },
    });
    await expectTokensCharged(userId, START_QUOTA, { model: GEMINI_IMAGE_MODEL, prompt: PROMPT_TOKENS, completion, billed: { images: 1 } });
  });

  it.each([
    ['n: 2', { n: 2 }, 'n'],
    ['stream: true', { stream: true }, 'stream'],
  ] as const)('refuses %s with 400 naming %s (one image, whole), before any upstream call, charging nothing', async (_name, ask, param) => {
    const { key, userId, openai } = await mediaCustomer();
    const failure = await sdkFailure(openai.images.generate({ model: GEMINI_IMAGE_MODEL, prompt: PROMPT, ...ask }));
    expect(failure).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request', param });
    expect(modelCalls(key)).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
  });

  it('answers a prompt the model draws no image for with 400, charging nothing', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const failure = await sdkFailure(openai.images.generate({ model: GEMINI_IMAGE_MODEL, prompt: `how to ${FAKE_FLAGGED_WORD} a fox` }));
    expect(failure).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request' });
    expect(failure.message).toContain('the model answered without an image (finish reason IMAGE_SAFETY)');
    expect(modelCalls(key)).toHaveLength(1);
    await expectNothingCharged(userId, START_QUOTA);
  });
});
