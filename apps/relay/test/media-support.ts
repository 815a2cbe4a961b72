// What the media tests (docs/api.md 2.13, 2.14) share: OpenAI's media models on an OpenAI-compatible
// (1) and an Azure (3) channel under the channel's own names, their prices and the checks of what a
// call was charged (per unit or by tokens, or nothing), audio files whose header states their
// duration, and the upload spools left in the temp dir.
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { AZURE_API_VERSION, CHANNEL_TYPE, consumeContentOf } from '@modelgate/schemas';
import { type ChannelOverrides, createChannel, redisPrefix, setOption } from '@modelgate/testing';
import { type PcmFormat, type RecordedRequest, silentWav, wavHeader as pcmWavHeader } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { expectKeyNotForwarded, settledConsumeRow } from './chat-support';
import { createCustomer, eventually, expectLedgerInvariant, harness, openAiClient } from './harness';

export const { openai: OPENAI, azure: AZURE } = CHANNEL_TYPE;

/** The channel types that pass OpenAI's image and audio calls through (docs/api.md 2.13). */
export type PassThroughType = typeof OPENAI | typeof AZURE;

/** What every media test's customer starts with. */
export const START_QUOTA = 1_000_000;

/** A customer with START_QUOTA (unless `fields` say otherwise) and an openai SDK client on its key. */
export async function mediaCustomer(fields: Parameters<typeof createCustomer>[1] = {}) {
  const { key, userId } = await createCustomer(harness.prisma, { quota: START_QUOTA, ...fields });
  return { key, userId, openai: openAiClient(harness, key) };
}

/** A JSON POST to the relay as a client without the openai SDK (Jina's, Cohere's) sends it. */
export async function postJson(key: string, path: string, body: Record<string, unknown>) {
  const response = await fetch(`${harness.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, answer: (await response.json()) as Record<string, unknown> };
}

/** docs/api.md 2.14: the quota one USD buys (the option's default, set explicitly by `setMediaPrices`). */
export const QUOTA_PER_UNIT = 500_000;

/** ModelPrice, USD per unit: an image, 1,000 characters of speech, a minute of audio, a rerank request. */
export const USD_PER_UNIT = {
  'dall-e-3': 0.04,
  'tts-1': 0.015,
  'whisper-1': 0.006,
  'rerank-v3.5': 0.002,
} as const;

/** The models priced by the tokens their answers report (ModelRatio, CompletionRatio). */
export const TOKEN_PRICES = {
  'gpt-image-1': { modelRatio: 2.5, completionRatio: 4 },
  'gpt-4o-transcribe': { modelRatio: 1.25, completionRatio: 4 },
  'gemini-2.5-flash-image': { modelRatio: 0.15, completionRatio: 200 },
  'jina-reranker-v2-base-multilingual': { modelRatio: 2, completionRatio: 1 },
} as const;

export type MediaModel = 'dall-e-3' | 'gpt-image-1' | 'tts-1' | 'whisper-1' | 'gpt-4o-transcribe';

/**
 * Per type: the channel's key and the name it serves each media model under (Azure: the deployment).
 * The names keep the model's prefix, which the fake answers by (gpt-image models report usage).
 */
export const MEDIA_CHANNELS: Readonly<Record<PassThroughType, { key: string; models: Readonly<Record<MediaModel, string>> }>> = {
  [OPENAI]: {
    key: 'sk-upstream-openai-media-secret',
    models: {
      'dall-e-3': 'dall-e-3-2023-11',
      'gpt-image-1': 'gpt-image-1-2025-04-15',
      'tts-1': 'tts-1-1106',
      'whisper-1': 'whisper-1-large-v2',
      'gpt-4o-transcribe': 'gpt-4o-transcribe-2025-03-20',
    },
  },
  [AZURE]: {
    key: 'azure-resource-key-SECRET-7c2d9e4f1a0b',
    models: {
      'dall-e-3': 'dall-e-3-prod',
      'gpt-image-1': 'gpt-image-1-prod',
      'tts-1': 'tts-1-prod',
      'whisper-1': 'whisper-1-prod',
      'gpt-4o-transcribe': 'gpt-4o-transcribe-prod',
    },
  },
};

export const PASS_THROUGH_TYPES = [['OpenAI-compatible (1)', OPENAI], ['Azure (3)', AZURE]] as const;

/** Every price of the media models, in the caches' source (reload them after). */
export async function setMediaPrices(): Promise<void> {
  const { prisma } = harness;
  await setOption(prisma, 'QuotaPerUnit', QUOTA_PER_UNIT);
  await setOption(prisma, 'ModelPrice', USD_PER_UNIT);
  await setOption(prisma, 'ModelRatio', Object.fromEntries(Object.entries(TOKEN_PRICES).map(([model, price]) => [model, price.modelRatio])));
  await setOption(prisma, 'CompletionRatio', Object.fromEntries(Object.entries(TOKEN_PRICES).map(([model, price]) => [model, price.completionRatio])));
}

/** A channel of `type` on `baseUrl` serving every media model under its own name. */
export function mediaChannel(type: PassThroughType, baseUrl: string, fields: ChannelOverrides = {}) {
  const { key, models } = MEDIA_CHANNELS[type];
  return createChannel(harness.prisma, { type, baseUrl, key, models: Object.keys(models).join(','), modelMapping: JSON.stringify(models), ...fields });
}

/** The media operations after `/v1/`, as OpenAI and Azure's deployments name them. */
export type MediaOperation = 'images/generations' | 'images/edits' | 'audio/speech' | 'audio/transcriptions' | 'audio/translations';

/** Where a channel of `type` is asked `operation` for `model` (Azure: the deployment's route, docs/api.md 2.12). */
export function upstreamUrl(type: PassThroughType, operation: MediaOperation, model: MediaModel): string {
  if (type === OPENAI) return `/v1/${operation}`;
  return `/openai/deployments/${MEDIA_CHANNELS[AZURE].models[model]}/${operation}?api-version=${AZURE_API_VERSION}`;
}

/**
 * The call reached the channel of `type` at its route for `operation`, with the channel's key where
 * that type takes it (a bearer token, Azure's `api-key`) and nothing of the client's.
 */
export function expectUpstreamCall(request: RecordedRequest, type: PassThroughType, operation: MediaOperation, model: MediaModel, clientKey: string): void {
  expect(request.url).toBe(upstreamUrl(type, operation, model));
  const { key, models } = MEDIA_CHANNELS[type];
  if (type === OPENAI) {
    expect(request.headers.authorization).toBe(`Bearer ${key}`);
    expect(request.headers['api-key']).toBeUndefined();
  } else {
    expect(request.headers['api-key']).toBe(key);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.cloud).toEqual({ model: models[model], auth: 'api-key' });
  }
  expectKeyNotForwarded(request, clientKey);
}

/** docs/api.md 2.14: round(USD x units x GroupRatio x QuotaPerUnit), in the relay's order of operations. */
export function unitCharge(usdPerUnit: number, units: number, groupRatio = 1): number {
  return Math.round(usdPerUnit * units * groupRatio * QUOTA_PER_UNIT);
}

/** docs/api.md 2.11: the tokens at the model's ratios. */
export function tokenCharge(model: keyof typeof TOKEN_PRICES, prompt: number, completion: number, groupRatio = 1): number {
  const { modelRatio, completionRatio } = TOKEN_PRICES[model];
  return Math.max(1, Math.round((prompt + completion * completionRatio) * modelRatio * groupRatio));
}

/** Units as the relay rounds them (to 1e-6): `1.033333 minute`. */
export const roundedUnits = (units: number): number => Math.round(units * 1e6) / 1e6;

/** How a consume row's content names each price unit (docs/api.md 2.14). */
const UNIT_NAMES = { image: 'image', '1k_characters': '1,000 characters', minute: 'minute', request: 'request' } as const;

/** A call priced per unit (docs/api.md 2.14): what it had, its units, and the unit's price. */
export interface UnitPricedCall {
  model: string;
  usdPerUnit: number;
  units: number;
  unit: keyof typeof UNIT_NAMES;
  /** What the row keeps of what the call had: images, characters, seconds or requests. */
  billed: Record<string, number>;
  groupRatio?: number;
}

/**
 * The call's one consume row (settled just after the answer, for some: polled) charged exactly its
 * units at their price, saying so in `other` and `content`; the user who had `startQuota` paid it.
 */
export async function expectUnitCharged(userId: number, startQuota: number, call: UnitPricedCall) {
  const groupRatio = call.groupRatio ?? 1;
  const quota = unitCharge(call.usdPerUnit, call.units, groupRatio);
  const row = await eventually(() => settledConsumeRow(harness));
  expect(row).toMatchObject({ modelName: call.model, quota: BigInt(-quota) });
  expect(row.other).toMatchObject({ ...call.billed, units: call.units, unit: call.unit, usd_per_unit: call.usdPerUnit, group_ratio: groupRatio, model_ratio: 0 });
  expect(row.content).toBe('');
  expect(consumeContentOf(row.other as Record<string, unknown>)).toBe(`${call.units} x USD ${call.usdPerUnit} per ${UNIT_NAMES[call.unit]}, group ratio ${groupRatio}`);
  const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(user.quota).toBe(BigInt(startQuota - quota));
  await expectLedgerInvariant(harness.prisma);
  return row;
}

/**
 * The call's one consume row charged its reported tokens at the model's ratios (docs/api.md 2.14),
 * with what it had in `other` and no unit price; the user who had `startQuota` paid it.
 */
export async function expectTokensCharged(
  userId: number,
  startQuota: number,
  call: { model: keyof typeof TOKEN_PRICES; prompt: number; completion: number; billed: Record<string, number>; groupRatio?: number },
) {
  const groupRatio = call.groupRatio ?? 1;
  const quota = tokenCharge(call.model, call.prompt, call.completion, groupRatio);
  const { modelRatio, completionRatio } = TOKEN_PRICES[call.model];
  const row = await eventually(() => settledConsumeRow(harness));
  expect(row).toMatchObject({ modelName: call.model, quota: BigInt(-quota), promptTokens: call.prompt, completionTokens: call.completion });
  expect(row.other).toMatchObject({ ...call.billed, model_ratio: modelRatio, completion_ratio: completionRatio, group_ratio: groupRatio });
  expect(row.other).not.toHaveProperty('usd_per_unit');
  expect(row.content).toBe('');
  expect(consumeContentOf(row.other as Record<string, unknown>)).toBe(`model ratio ${modelRatio}, completion ratio ${completionRatio}, group ratio ${groupRatio}`);
  const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(user.quota).toBe(BigInt(startQuota - quota));
  await expectLedgerInvariant(harness.prisma);
  return row;
}

/** Nothing was charged: the reservation released, no consume row, the user's quota as it started, the ledger consistent. */
export async function expectNothingCharged(userId: number, startQuota: number): Promise<void> {
  await eventually(async () => expect(await holdsOf(userId)).toEqual([]));
  await harness.relay.ledger.flush();
  expect(await harness.prisma.log.count({ where: { type: 2 } })).toBe(0);
  const user = await harness.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(user.quota).toBe(BigInt(startQuota));
  await expectLedgerInvariant(harness.prisma);
}

/** The relays holding a reservation of the user's (one `h:<instance>` field each in its Redis balance mirror). */
export async function holdsOf(userId: number): Promise<string[]> {
  const mirror = await harness.redis.hgetall(`${redisPrefix()}bal:u:${userId}`);
  return Object.keys(mirror).filter((field) => field.startsWith('h:'));
}

/** The OpenAI SDK's error for a refused call: its status and the `error` object of the OpenAI shape. */
export async function sdkFailure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const failure = await call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(OpenAI.APIError);
  return failure as InstanceType<typeof OpenAI.APIError>;
}

export { WAV_HEADER_BYTES } from '@modelgate/testing/fake-upstream';
/** 8 kHz 8-bit mono: a byte a sample, so a minute of audio stays small. */
export const WAV_SAMPLE_RATE = 8_000;
const TEST_PCM: PcmFormat = { sampleRate: WAV_SAMPLE_RATE, bitsPerSample: 8 };

/** The header of a test WAV whose samples take `dataBytes`: it states the duration. */
export const wavHeader = (dataBytes: number): Buffer => pcmWavHeader(dataBytes, TEST_PCM);

/** A test WAV of `seconds` of silence: its header states the duration (docs/api.md 2.14 prices audio by it). */
export const wavFile = (seconds: number): Buffer => silentWav(seconds, TEST_PCM);

/** The upload spools in the OS temp dir (see features/upload/spool.ts). */
export async function spoolFiles(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith('modelgate-upload-'));
}

/** No spool made since `before` is left: every upload's temporary file was removed with its call. */
export async function expectNoSpoolLeft(before: readonly string[]): Promise<void> {
  await eventually(async () => expect((await spoolFiles()).filter((name) => !before.includes(name))).toEqual([]));
}
