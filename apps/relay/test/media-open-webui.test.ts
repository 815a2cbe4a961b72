// docs/api.md 2.13: the calls Open WebUI makes for its image generation, text-to-speech
// and speech-to-text settings (Python `requests`: JSON bodies, and a multipart form with the text
// fields before the file), answered as OpenAI answers them and billed per docs/api.md 2.14.
import { createChannel, setOption } from '@modelgate/testing';
import { FAKE_PNG, FAKE_SPEECH_MS_PER_CHARACTER } from '@modelgate/testing/fake-upstream';
import { settledConsumeRow } from './chat-support';
import { createCustomer, eventually, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import { wavFile } from './media-support';

relaySuite();

const PRICES = { 'dall-e-3': 0.04, 'tts-1': 0.015, 'whisper-1': 0.006 };
/** The fake's speech: 24 kHz 16-bit mono PCM. */
const SPEECH_BYTES_PER_MS = 48;

beforeEach(async () => {
  await resetSuite();
  await setOption(harness.prisma, 'ModelPrice', PRICES);
  await createChannel(harness.prisma, { type: 1, baseUrl: upstream.url, models: Object.keys(PRICES).join(','), key: 'sk-upstream-openai' });
  await harness.reloadCaches();
});

function post(key: string, path: string, body: string | Buffer, contentType: string): Promise<Response> {
  return fetch(`${harness.url}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body });
}

it('image generation: JSON in, b64_json out, one image at the dall-e-3 price', async () => {
  const customer = await createCustomer(harness.prisma);
  const response = await post(
    customer.key,
    '/images/generations',
    JSON.stringify({ model: 'dall-e-3', prompt: 'A lighthouse at dawn', n: 1, size: '1024x1024', response_format: 'b64_json' }),
    'application/json',
  );
  expect(response.status).toBe(200);
  const answer = (await response.json()) as { data: { b64_json: string }[] };
  expect(Buffer.from(answer.data[0]!.b64_json, 'base64')).toEqual(FAKE_PNG);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(BigInt(-Math.round(PRICES['dall-e-3'] * 500_000)));
  await expectLedgerInvariant(harness.prisma);
});

it('text to speech: the audio bytes with their content type, per 1,000 characters', async () => {
  const customer = await createCustomer(harness.prisma);
  const input = 'Hello from Open WebUI';
  const response = await post(customer.key, '/audio/speech', JSON.stringify({ input, model: 'tts-1', voice: 'alloy' }), 'application/json');
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('audio/mpeg');
  const audio = Buffer.from(await response.arrayBuffer());
  expect(audio.length).toBe(input.length * FAKE_SPEECH_MS_PER_CHARACTER * SPEECH_BYTES_PER_MS);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(BigInt(-Math.round(PRICES['tts-1'] * (input.length / 1000) * 500_000)));
});

it('speech to text: requests-style multipart (fields, then the file), per minute by the second', async () => {
  const customer = await createCustomer(harness.prisma);
  const boundary = 'a1b2c3d4e5f6';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="recording.wav"\r\n\r\n`),
    wavFile(75),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const response = await post(customer.key, '/audio/transcriptions', body, `multipart/form-data; boundary=${boundary}`);
  expect(response.status).toBe(200);
  expect(typeof ((await response.json()) as { text: unknown }).text).toBe('string');
  const row = await eventually(() => settledConsumeRow(harness));
  expect(row.other).toMatchObject({ seconds: 75, units: 1.25, unit: 'minute', usd_per_unit: PRICES['whisper-1'] });
  expect(row.quota).toBe(BigInt(-Math.round(PRICES['whisper-1'] * 1.25 * 500_000)));
  await expectLedgerInvariant(harness.prisma);
});
