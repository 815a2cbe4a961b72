// docs/api.md 2.13, 2.14: `POST /v1/audio/speech`, `/v1/audio/transcriptions` and
// `/v1/audio/translations` through the openai SDK, passed through to OpenAI-compatible and Azure
// channels. Speech is relayed as the upstream sends it and priced per 1,000 characters; an upload
// goes to the upstream as multipart with the channel's model, its transcript comes back in the
// format asked, priced per minute by the second or by the tokens reported.
import { FAKE_AUDIO_BYTES_PER_SECOND, FAKE_AUDIO_TOKENS_PER_SECOND, FAKE_SPEECH_MS_PER_CHARACTER, FAKE_TEXT_PIECE, fakePcmBase64 } from '@modelgate/testing/fake-upstream';
import OpenAI, { toFile } from 'openai';
import { recorded } from './chat-support';
import { eventually, harness, relaySuite, resetSuite, upstream } from './harness';
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
  roundedUnits,
  setMediaPrices,
  START_QUOTA,
  USD_PER_UNIT,
  wavFile,
} from './media-support';

/** 17 characters (code points), 19 UTF-16 code units: speech is priced by the former. */
const SPEECH_INPUT = 'Hello 👋, wörld 🌍!';
const SPEECH_CHARACTERS = 17;
/** What the fake speaks for SPEECH_INPUT (it times the audio by UTF-16 length). */
const SPEECH_AUDIO = Buffer.from(fakePcmBase64(SPEECH_INPUT.length * FAKE_SPEECH_MS_PER_CHARACTER), 'base64');
const SPEECH_PRICE = { model: 'tts-1', usdPerUnit: USD_PER_UNIT['tts-1'], units: roundedUnits(SPEECH_CHARACTERS / 1000), unit: '1k_characters', billed: { characters: SPEECH_CHARACTERS } } as const;

/** A minute and 1.5 seconds: charged as 62 seconds. */
const AUDIO_SECONDS = 61.5;
const AUDIO = wavFile(AUDIO_SECONDS);
const BILLED_SECONDS = 62;
const AUDIO_PRICE = { model: 'whisper-1', usdPerUnit: USD_PER_UNIT['whisper-1'], units: roundedUnits(BILLED_SECONDS / 60), unit: 'minute', billed: { seconds: BILLED_SECONDS } } as const;
/**
 * Frames of a 64 kbit/s MPEG-1 Layer III stream at 44.1 kHz (1,152 samples, 208 bytes each: a
 * header and silence) without a Xing header: its duration shows only when every frame is counted.
 */
const MP3_FRAMES = 1000;
const MP3 = Buffer.concat(Array.from({ length: MP3_FRAMES }, () => Buffer.concat([Buffer.from([0xff, 0xfb, 0x50, 0xc0]), Buffer.alloc(204)])));
const MP3_SECONDS = Math.ceil((MP3_FRAMES * 1152) / 44_100);
/** The fake's text pieces per answer (resetSuite's setting). */
const TEXT_PIECES = 5;
/** The fake's transcript: its text pieces, trimmed. */
const TRANSCRIPT = FAKE_TEXT_PIECE.repeat(TEXT_PIECES).trim();

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await setMediaPrices();
});

async function readAll(body: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const speechFile = () => toFile(AUDIO, 'speech.wav', { type: 'audio/wav' });

type TranscriptionBody = OpenAI.Audio.TranscriptionCreateParamsNonStreaming & OpenAI.Audio.TranslationCreateParams;

function transcribe(openai: OpenAI, surface: 'transcriptions' | 'translations', body: TranscriptionBody) {
  return surface === 'transcriptions' ? openai.audio.transcriptions.create(body) : openai.audio.translations.create(body);
}

describe.each(PASS_THROUGH_TYPES)('audio on an %s channel', (_name, type) => {
  const { models } = MEDIA_CHANNELS[type];

  beforeEach(async () => {
    await mediaChannel(type, upstream.url);
    await harness.reloadCaches();
  });

  it('speech: the audio bytes as the upstream sent them, charged per 1,000 characters', async () => {
    const { key, userId, openai } = await mediaCustomer();
    const response = await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPEECH_INPUT });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect((await readAll(response.body!)).equals(SPEECH_AUDIO)).toBe(true);

    const request = recorded(upstream.requests);
    expectUpstreamCall(request, type, 'audio/speech', 'tts-1', key);
    expect(request.json).toEqual({ model: models['tts-1'], voice: 'alloy', input: SPEECH_INPUT });
    const row = await expectUnitCharged(userId, START_QUOTA, SPEECH_PRICE);
    expect(row.isStream).toBe(true);
  });

  it.each(['transcriptions', 'translations'] as const)('%s: the upload as multipart with the channel model, the transcript, charged per minute by the second', async (surface) => {
    const { key, userId, openai } = await mediaCustomer();
    const answer = await transcribe(openai, surface, { file: await speechFile(), model: 'whisper-1', response_format: 'json' });
    // Transcriptions report the seconds heard; translations report nothing, the file's duration prices them.
    expect(answer).toEqual(surface === 'transcriptions' ? { text: TRANSCRIPT, usage: { type: 'duration', seconds: BILLED_SECONDS } } : { text: TRANSCRIPT });

    const request = recorded(upstream.requests);
    expectUpstreamCall(request, type, `audio/${surface}`, 'whisper-1', key);
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.form).toEqual({
      fields: { model: models['whisper-1'], response_format: 'json' },
      files: [{ name: 'file', filename: 'speech.wav', size: AUDIO.length, contentType: 'audio/wav' }],
    });
    expect(request.body.includes(AUDIO)).toBe(true);
    await expectUnitCharged(userId, START_QUOTA, AUDIO_PRICE);
  });

  it('transcriptions: a gpt-4o transcribe model is charged the tokens it reported', async () => {
    const { userId, openai } = await mediaCustomer();
    const answer = await openai.audio.transcriptions.create({ file: await speechFile(), model: 'gpt-4o-transcribe' });
    const prompt = Math.ceil(AUDIO_SECONDS * FAKE_AUDIO_TOKENS_PER_SECOND);
    // One output token per text piece.
    const completion = TEXT_PIECES;
    expect(answer).toEqual({ text: TRANSCRIPT, usage: expect.objectContaining({ type: 'tokens', input_tokens: prompt, output_tokens: completion }) });
    expect(recorded(upstream.requests).form?.fields.model).toBe(models['gpt-4o-transcribe']);
    await expectTokensCharged(userId, START_QUOTA, { model: 'gpt-4o-transcribe', prompt, completion, billed: { seconds: BILLED_SECONDS } });
  });
});

describe.each(['transcriptions', 'translations'] as const)('%s in every response_format', (surface) => {
  beforeEach(async () => {
    await mediaChannel(OPENAI, upstream.url);
    await harness.reloadCaches();
  });

  it('verbose_json: the transcript with its duration and segments, charged by that duration', async () => {
    const { userId, openai } = await mediaCustomer();
    const answer = await transcribe(openai, surface, { file: await speechFile(), model: 'whisper-1', response_format: 'verbose_json' });
    expect(answer).toMatchObject({
      task: surface === 'transcriptions' ? 'transcribe' : 'translate',
      language: 'english',
      duration: AUDIO_SECONDS,
      text: TRANSCRIPT,
      segments: [{ id: 0, start: 0, end: AUDIO_SECONDS, text: TRANSCRIPT }],
    });
    expect(recorded(upstream.requests).form?.fields).toEqual({ model: MEDIA_CHANNELS[OPENAI].models['whisper-1'], response_format: 'verbose_json' });
    await expectUnitCharged(userId, START_QUOTA, AUDIO_PRICE);
  });

  it.each([
    ['text', `${TRANSCRIPT}\n`],
    ['srt', `1\n00:00:00,000 --> 00:01:01,500\n${TRANSCRIPT}\n\n`],
    ['vtt', `WEBVTT\n\n00:00:00.000 --> 00:01:01.500\n${TRANSCRIPT}\n\n`],
  ] as const)('%s: the transcript as text, charged by the duration the file states', async (responseFormat, transcript) => {
    const { userId, openai } = await mediaCustomer();
    const answer = await transcribe(openai, surface, { file: await speechFile(), model: 'whisper-1', response_format: responseFormat });
    expect(answer).toBe(transcript);
    expect(recorded(upstream.requests).form?.fields).toEqual({ model: MEDIA_CHANNELS[OPENAI].models['whisper-1'], response_format: responseFormat });
    await expectUnitCharged(userId, START_QUOTA, AUDIO_PRICE);
  });
});

describe('the seconds of a file whose header does not state its duration', () => {
  beforeEach(async () => {
    await mediaChannel(OPENAI, upstream.url);
    await harness.reloadCaches();
  });

  /** The fake hears a headerless file at FAKE_AUDIO_BYTES_PER_SECOND; the relay reads its frames. */
  const HEARD_SECONDS = Math.ceil(MP3.length / FAKE_AUDIO_BYTES_PER_SECOND);

  it.each<['transcriptions' | 'translations', 'json' | 'text', number]>([
    ['transcriptions', 'json', HEARD_SECONDS],
    ['transcriptions', 'text', MP3_SECONDS],
    ['translations', 'json', MP3_SECONDS],
  ])('%s %s: charged %d seconds (what the upstream reported, else the whole file read frame by frame)', async (surface, responseFormat, seconds) => {
    expect(HEARD_SECONDS).not.toBe(MP3_SECONDS);
    const { userId, openai } = await mediaCustomer();
    await transcribe(openai, surface, { file: await toFile(MP3, 'speech.mp3', { type: 'audio/mpeg' }), model: 'whisper-1', response_format: responseFormat });
    await expectUnitCharged(userId, START_QUOTA, { ...AUDIO_PRICE, units: roundedUnits(seconds / 60), billed: { seconds } });
  });
});

describe('speech relayed as it arrives', () => {
  const PIECES = 6;
  const CHUNK_DELAY_MS = 200;

  beforeEach(async () => {
    await mediaChannel(OPENAI, upstream.url);
    await harness.reloadCaches();
    upstream.setMode('ok', { chunks: PIECES, chunkDelayMs: CHUNK_DELAY_MS });
  });

  it('reaches the client from the first bytes, while the upstream is still speaking', async () => {
    const { userId, openai } = await mediaCustomer();
    const response = await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPEECH_INPUT });
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value?.length).toBeGreaterThan(0);
    const request = recorded(upstream.requests);
    expect(request.completed).toBe(false);
    expect(request.chunksSent).toBeLessThan(PIECES);

    const rest: Buffer[] = [Buffer.from(first.value ?? [])];
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest.push(Buffer.from(next.value));
    expect(Buffer.concat(rest).equals(SPEECH_AUDIO)).toBe(true);
    await eventually(() => expect(request.completed).toBe(true));
    await expectUnitCharged(userId, START_QUOTA, SPEECH_PRICE);
  });

  it('charges a client that left midway (the audio was generated) and closes the upstream call', async () => {
    const { userId, openai } = await mediaCustomer();
    const controller = new AbortController();
    const response = await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPEECH_INPUT }, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect((await reader.read()).value?.length).toBeGreaterThan(0);
    controller.abort();
    await reader.read().catch(() => undefined);

    const request = recorded(upstream.requests);
    await eventually(() => expect(request.closed).toBe(true));
    expect(request.completed).toBe(false);
    expect(request.chunksSent).toBeLessThan(PIECES);
    await expectUnitCharged(userId, START_QUOTA, SPEECH_PRICE);
  });

  it('charges nothing to a client that left before the first byte', async () => {
    upstream.setMode('hangBeforeHeaders');
    const { userId, openai } = await mediaCustomer();
    const controller = new AbortController();
    const call = openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPEECH_INPUT }, { signal: controller.signal });
    await eventually(() => expect(upstream.requests).toHaveLength(1));
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);

    await eventually(() => expect(recorded(upstream.requests).closed).toBe(true));
    await expectNothingCharged(userId, START_QUOTA);
  });
});
