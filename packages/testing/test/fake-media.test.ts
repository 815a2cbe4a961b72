// The fake OpenAI media and other endpoints, driven by the openai SDK (rerank, which it lacks, by
// plain fetch): if the SDK cannot parse what the fake answers, tests built on it prove nothing.
import OpenAI, { AzureOpenAI, toFile } from 'openai';
import {
  FAKE_AUDIO_BYTES_PER_SECOND,
  FAKE_FLAGGED_WORD,
  FAKE_IMAGE_OUTPUT_TOKENS,
  FAKE_PNG,
  FAKE_SPEECH_MS_PER_CHARACTER,
  type FakeMode,
  type FakeUpstream,
  startFakeUpstream,
} from '../src/fake-upstream';

const KEY = 'sk-fake-media-key';
const TEXT = 'hello hello hello hello hello';
/** 24 kHz 16-bit mono PCM: bytes per ms of speech. */
const PCM_BYTES_PER_MS = 48;

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeUpstream();
});
afterEach(() => fake.close());

const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${fake.url}/v1`, maxRetries: 0 });
const mode = (fakeMode: FakeMode) => ({ headers: { 'x-fake-mode': fakeMode } });
const upload = (bytes: number, name = 'audio.mp3', type = 'audio/mpeg') => toFile(Buffer.alloc(bytes, 1), name, { type });

describe('images', () => {
  it('generates n images with token usage for gpt-image-1', async () => {
    const answer = await openai().images.generate({ model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'high' });
    expect(answer.data).toHaveLength(2);
    expect(Buffer.from(answer.data?.[0]?.b64_json ?? '', 'base64')).toEqual(FAKE_PNG);
    const output = 2 * (FAKE_IMAGE_OUTPUT_TOKENS.high ?? 0);
    expect(answer.usage).toEqual({ input_tokens: 3, input_tokens_details: { text_tokens: 3, image_tokens: 0 }, output_tokens: output, total_tokens: 3 + output });
    expect(fake.requests[0]).toMatchObject({ dialect: 'openai', path: '/v1/images/generations', json: { n: 2, quality: 'high' } });
  });

  it('answers dall-e-3 with urls on request and without usage', async () => {
    const answer = await openai().images.generate({ model: 'dall-e-3', prompt: 'a red fox', response_format: 'url' });
    expect(answer.data).toEqual([{ url: expect.stringMatching(/^https:\/\//), revised_prompt: 'a red fox' }]);
    expect(answer.usage).toBeUndefined();
  });

  it('edits uploaded images and records the multipart fields and files', async () => {
    const image = await toFile(FAKE_PNG, 'in.png', { type: 'image/png' });
    const mask = await toFile(Buffer.alloc(10), 'mask.png', { type: 'image/png' });
    const answer = await openai().images.edit({ model: 'gpt-image-1', image: [image, image], mask, prompt: 'add a hat', n: 1, size: '1024x1024' });
    expect(Buffer.from(answer.data?.[0]?.b64_json ?? '', 'base64')).toEqual(FAKE_PNG);
    // 3 prompt words + 2 images of 258 tokens
    expect(answer.usage).toMatchObject({ input_tokens: 519, input_tokens_details: { text_tokens: 3, image_tokens: 516 } });
    const { form, json } = fake.requests[0] ?? {};
    expect(json).toBeUndefined();
    expect(form?.fields).toMatchObject({ model: 'gpt-image-1', prompt: 'add a hat', n: '1', size: '1024x1024' });
    // In the order the SDK writes them.
    expect(form?.files).toHaveLength(3);
    expect(form?.files).toEqual(expect.arrayContaining([
      { name: 'image[]', filename: 'in.png', size: FAKE_PNG.length, contentType: 'image/png' },
      { name: 'mask', filename: 'mask.png', size: 10, contentType: 'image/png' },
    ]));
    expect(form?.files.filter((file) => file.name === 'image[]')).toHaveLength(2);
  });

  it('serves the Azure deployment route with the deployment as the model', async () => {
    const azure = new AzureOpenAI({ endpoint: fake.url, apiKey: KEY, apiVersion: '2025-04-01-preview', deployment: 'image-prod', maxRetries: 0 });
    const answer = await azure.images.generate({ model: 'image-prod', prompt: 'a red fox' });
    expect(answer.data).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ dialect: 'azure', path: '/openai/deployments/image-prod/images/generations', cloud: { model: 'image-prod', auth: 'api-key' } });
  });

  it('plays the fault modes from the header and from a form field', async () => {
    await expect(openai().images.generate({ model: 'dall-e-3', prompt: 'x' }, mode('error429'))).rejects.toMatchObject({ status: 429 });
    const image = await toFile(FAKE_PNG, 'in.png', { type: 'image/png' });
    const edit = { model: 'gpt-image-1', image, prompt: 'x', fake_mode: 'error500' } as OpenAI.ImageEditParams;
    await expect(openai().images.edit(edit)).rejects.toMatchObject({ status: 500 });
    expect(fake.requests.map((request) => request.mode)).toEqual(['error429', 'error500']);
  });
});

describe('audio', () => {
  it('streams speech in chunks with the format content type, length by input characters', async () => {
    fake.setMode('ok', { chunks: 4, chunkDelayMs: 5 });
    const input = 'Hello there';
    const response = await openai().audio.speech.create({ model: 'gpt-4o-mini-tts', input, voice: 'alloy', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.length).toBe(44 + input.length * FAKE_SPEECH_MS_PER_CHARACTER * PCM_BYTES_PER_MS);
    expect(bytes.toString('ascii', 0, 4)).toBe('RIFF');
    expect(fake.requests[0]?.chunksSent).toBe(4);

    const mp3 = await openai().audio.speech.create({ model: 'tts-1', input, voice: 'alloy' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    expect((await mp3.arrayBuffer()).byteLength).toBe(input.length * FAKE_SPEECH_MS_PER_CHARACTER * PCM_BYTES_PER_MS);
  });

  it('transcribes as json with token usage (gpt-4o-transcribe) and duration usage (whisper-1)', async () => {
    const tokens = await openai().audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await upload(3 * FAKE_AUDIO_BYTES_PER_SECOND) });
    expect(tokens).toEqual({ text: TEXT, usage: { type: 'tokens', input_tokens: 30, input_token_details: { text_tokens: 0, audio_tokens: 30 }, output_tokens: 5, total_tokens: 35 } });
    const seconds = await openai().audio.transcriptions.create({ model: 'whisper-1', file: await upload(2 * FAKE_AUDIO_BYTES_PER_SECOND) });
    expect(seconds).toEqual({ text: TEXT, usage: { type: 'duration', seconds: 2 } });
    expect(fake.requests[1]?.form?.files).toEqual([{ name: 'file', filename: 'audio.mp3', size: 2 * FAKE_AUDIO_BYTES_PER_SECOND, contentType: 'audio/mpeg' }]);
  });

  it('transcribes as text, srt and vtt', async () => {
    const file = await upload(FAKE_AUDIO_BYTES_PER_SECOND * 1.5);
    expect(await openai().audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'text' })).toBe(`${TEXT}\n`);
    expect(await openai().audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'srt' })).toBe(`1\n00:00:00,000 --> 00:00:01,500\n${TEXT}\n\n`);
    expect(await openai().audio.transcriptions.create({ model: 'whisper-1', file, response_format: 'vtt' })).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n${TEXT}\n\n`);
  });

  it('gives verbose_json the duration of a WAV upload from its header', async () => {
    const speech = await openai().audio.speech.create({ model: 'tts-1', input: 'abcdefghijklmnopqrst', voice: 'alloy', response_format: 'wav' });
    const wav = await toFile(Buffer.from(await speech.arrayBuffer()), 'speech.wav', { type: 'audio/wav' });
    const verbose = await openai().audio.transcriptions.create({ model: 'whisper-1', file: wav, response_format: 'verbose_json', language: 'en' });
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'en', duration: 1, text: TEXT, segments: [{ start: 0, end: 1, text: TEXT }], usage: { type: 'duration', seconds: 1 } });
  });

  it('translates without usage', async () => {
    const file = await upload(FAKE_AUDIO_BYTES_PER_SECOND);
    expect(await openai().audio.translations.create({ model: 'whisper-1', file })).toEqual({ text: TEXT });
    const verbose = await openai().audio.translations.create({ model: 'whisper-1', file, response_format: 'verbose_json' });
    expect(verbose).toMatchObject({ task: 'translate', language: 'english', duration: 1, text: TEXT });
    expect(fake.requests[1]?.path).toBe('/v1/audio/translations');
  });

  it('refuses a transcription in a fault mode', async () => {
    await expect(openai().audio.transcriptions.create({ model: 'whisper-1', file: await upload(100) }, mode('overloaded'))).rejects.toMatchObject({ status: 503 });
  });
});

describe('moderations and rerank', () => {
  it('moderates each input, flagging the flagged word as violence', async () => {
    const answer = await openai().moderations.create({ model: 'omni-moderation-latest', input: ['a nice day', `I will ${FAKE_FLAGGED_WORD} it`] });
    expect(answer).toMatchObject({ id: 'modr-fake1', model: 'omni-moderation-latest' });
    expect(answer.results.map((result) => result.flagged)).toEqual([false, true]);
    expect(answer.results[1]?.categories).toMatchObject({ violence: true, hate: false });
    expect(answer.results[1]?.category_scores.violence).toBe(0.9);
  });

  it('reranks documents by shared query words, top_n and documents as asked', async () => {
    const rerank = (body: unknown) => fetch(`${fake.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const documents = ['Bananas are yellow', { text: 'France' }, 'Paris is the capital of France'];
    const response = await rerank({ model: 'jina-reranker-v2', query: 'capital of France', documents, top_n: 2 });
    expect(await response.json()).toEqual({
      model: 'jina-reranker-v2',
      results: [
        { index: 2, relevance_score: 1, document: { text: 'Paris is the capital of France' } },
        { index: 1, relevance_score: 1 / 3, document: { text: 'France' } },
      ],
      usage: { total_tokens: 3 + 3 + 1 + 6 },
    });
    const bare = await (await rerank({ model: 'rerank-v3.5', query: 'France', documents, return_documents: false })).json() as { results: unknown[] };
    expect(bare.results).toEqual([{ index: 1, relevance_score: 1 }, { index: 2, relevance_score: 1 }, { index: 0, relevance_score: 0 }]);
    expect((await rerank({ model: 'm', query: 'q', documents, fake_mode: 'error401' })).status).toBe(401);
  });
});
