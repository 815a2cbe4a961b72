import { createChannel, setOption } from '@modelgate/testing';
import OpenAI, { toFile } from 'openai';
import { recorded, settledConsumeRow } from './chat-support';
import { createCustomer, eventually, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';

relaySuite();

const MODELS = 'dall-e-3,gpt-image-1,tts-1,whisper-1,gpt-4o-transcribe,omni-moderation-latest,rerank-v3.5';

beforeEach(async () => {
  await resetSuite();
  await setOption(harness.prisma, 'ModelPrice', { 'dall-e-3': 0.04, 'tts-1': 0.015, 'whisper-1': 0.006, 'rerank-v3.5': 0.002 });
  await setOption(harness.prisma, 'ModelRatio', { 'gpt-image-1': 1, 'gpt-4o-transcribe': 1 });
  await setOption(harness.prisma, 'CompletionRatio', { 'gpt-image-1': 1, 'gpt-4o-transcribe': 1 });
  await createChannel(harness.prisma, { type: 1, baseUrl: upstream.url, models: MODELS, key: 'sk-upstream' });
  await harness.reloadCaches();
});

function wav(seconds: number): Buffer {
  const rate = 16000;
  const data = Buffer.alloc(rate * 2 * seconds);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0); h.writeUInt32LE(36 + data.length, 4); h.write('WAVE', 8); h.write('fmt ', 12); h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22); h.writeUInt32LE(rate, 24); h.writeUInt32LE(rate * 2, 28); h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34); h.write('data', 36); h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

it('images: dall-e-3 per image', async () => {
  const customer = await createCustomer(harness.prisma);
  const client = openAiClient(harness, customer.key);
  const answer = await client.images.generate({ model: 'dall-e-3', prompt: 'a cat', n: 2, quality: 'hd', size: '1792x1024' });
  expect(answer.data).toHaveLength(2);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(BigInt(-Math.round(0.04 * 6 * 500000)));
  expect(row.other).toMatchObject({ images: 2, units: 6, unit: 'image', usd_per_unit: 0.04 });
  await expectLedgerInvariant(harness.prisma);
});

it('images: gpt-image-1 by tokens', async () => {
  const customer = await createCustomer(harness.prisma);
  const answer = await openAiClient(harness, customer.key).images.generate({ model: 'gpt-image-1', prompt: 'a cat', quality: 'low' });
  expect(answer.usage?.output_tokens).toBe(272);
  const row = await settledConsumeRow(harness);
  expect(row.completionTokens).toBe(272);
  expect(row.other).toMatchObject({ images: 1 });
});

it('image edits: multipart upload', async () => {
  const customer = await createCustomer(harness.prisma);
  const image = await toFile(Buffer.alloc(100_000, 1), 'cat.png', { type: 'image/png' });
  const answer = await openAiClient(harness, customer.key).images.edit({ image, model: 'gpt-image-1', prompt: 'hat' });
  expect(answer.data).toHaveLength(1);
  const request = upstream.requests[0]!;
  expect(request.form?.fields.model).toBe('gpt-image-1');
  expect(request.form?.files[0]?.size ?? request.form?.files[0]).toBeDefined();
});

it('speech: streamed back, per 1k characters', async () => {
  const customer = await createCustomer(harness.prisma);
  const response = await openAiClient(harness, customer.key).audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hello world' });
  const bytes = Buffer.from(await response.arrayBuffer());
  expect(bytes.length).toBeGreaterThan(1000);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(BigInt(-Math.round(0.015 * 0.011 * 500000)));
  expect(row.other).toMatchObject({ characters: 11 });
});

it('transcriptions: whisper by seconds, file first', async () => {
  const customer = await createCustomer(harness.prisma);
  const file = await toFile(wav(61), 'a.wav', { type: 'audio/wav' });
  const answer = await openAiClient(harness, customer.key).audio.transcriptions.create({ file, model: 'whisper-1' });
  expect(typeof answer.text).toBe('string');
  const row = await settledConsumeRow(harness);
  expect(row.other).toMatchObject({ seconds: 61, unit: 'minute' });
  expect(row.quota).toBe(BigInt(-Math.round(0.006 * (61 / 60) * 500000)));
  const request = recorded(upstream.requests);
  expect(request.form?.fields.model).toBe('whisper-1');
});

it('transcriptions: text format priced by the file duration', async () => {
  const customer = await createCustomer(harness.prisma);
  const file = await toFile(wav(30), 'a.wav', { type: 'audio/wav' });
  await openAiClient(harness, customer.key).audio.translations.create({ model: 'whisper-1', file, response_format: 'text' });
  const row = await eventually(() => settledConsumeRow(harness));
  expect(row.other).toMatchObject({ seconds: 30 });
});

it('moderations: free', async () => {
  const customer = await createCustomer(harness.prisma);
  const answer = await openAiClient(harness, customer.key).moderations.create({ input: 'I will kill' });
  expect(answer.results[0]?.flagged).toBe(true);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(0n);
});

it('rerank', async () => {
  const customer = await createCustomer(harness.prisma);
  const response = await fetch(`${harness.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'rerank-v3.5', query: 'cat food', documents: ['dog', 'cat food brand'] }),
  });
  expect(response.status).toBe(200);
  const answer = (await response.json()) as { results: { index: number }[] };
  expect(answer.results[0]?.index).toBe(1);
  const row = await settledConsumeRow(harness);
  expect(row.quota).toBe(BigInt(-1000));
});

it('unpriced model refused', async () => {
  await setOption(harness.prisma, 'ModelPrice', {});
  await harness.reloadCaches();
  const customer = await createCustomer(harness.prisma);
  await expect(openAiClient(harness, customer.key).images.generate({ model: 'dall-e-3', prompt: 'x' })).rejects.toMatchObject({ status: 400, code: 'model_price_error' });
  expect(upstream.requests).toHaveLength(0);
  void OpenAI;
});
