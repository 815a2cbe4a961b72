// docs/api.md 1.3, 2.4, 2.14 on the media surfaces: a call the relay refuses (no price, a key not
// allowed the model, a balance short of the reservation) never reaches an upstream; one whose
// channel fails before the first byte moves to the next channel (an upload is sent again, whole,
// from its spool); an upstream 4xx is the client's; with every channel failing the client gets 502.
// Whatever failed, nothing is charged.
import { FAKE_PNG, type FakeMode } from '@modelgate/testing/fake-upstream';
import { setOption } from '@modelgate/testing';
import OpenAI, { toFile } from 'openai';
import { recorded, settledConsumeRow } from './chat-support';
import { backup, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import {
  expectNothingCharged,
  MEDIA_CHANNELS,
  mediaChannel,
  mediaCustomer,
  OPENAI,
  postJson,
  setMediaPrices,
  START_QUOTA,
  unitCharge,
  USD_PER_UNIT,
  wavFile,
} from './media-support';

const PROMPT = 'a lighthouse at dusk';
const AUDIO = wavFile(3);
const IMAGE = Buffer.alloc(80_000, 3);

relaySuite({}, { upstreams: 2 });

beforeEach(async () => {
  await resetSuite();
  await setMediaPrices();
});

/** One media call as a client makes it, and what its success looks like to that client. */
interface MediaCall {
  model: string;
  call(openai: OpenAI, key: string): Promise<unknown>;
  answered(answer: unknown): void;
}

/** A rerank as Cohere's SDK makes it: the answer, or its error thrown as the openai SDK would. */
async function rerank(key: string, body: Record<string, unknown>): Promise<unknown> {
  const { status, answer } = await postJson(key, '/v1/rerank', body);
  if (status !== 200) throw Object.assign(new Error('rerank refused'), { status, ...(answer.error as object) });
  return answer;
}

const CALLS: Record<string, MediaCall> = {
  'images/generations': {
    model: 'dall-e-3',
    call: (openai) => openai.images.generate({ model: 'dall-e-3', prompt: PROMPT }),
    answered: (answer) => expect(answer).toMatchObject({ data: [{ b64_json: FAKE_PNG.toString('base64') }] }),
  },
  'images/edits': {
    model: 'gpt-image-1',
    call: async (openai) => openai.images.edit({ model: 'gpt-image-1', prompt: PROMPT, image: await toFile(IMAGE, 'a.png', { type: 'image/png' }) }),
    answered: (answer) => expect(answer).toMatchObject({ data: [{ b64_json: FAKE_PNG.toString('base64') }] }),
  },
  'audio/speech': {
    model: 'tts-1',
    call: async (openai) => Buffer.from(await (await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there' })).arrayBuffer()),
    answered: (answer) => expect((answer as Buffer).length).toBeGreaterThan(0),
  },
  'audio/transcriptions': {
    model: 'whisper-1',
    call: async (openai) => openai.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(AUDIO, 'a.wav', { type: 'audio/wav' }) }),
    answered: (answer) => expect(answer).toMatchObject({ text: expect.any(String) }),
  },
  rerank: {
    model: 'rerank-v3.5',
    call: (_openai, key) => rerank(key, { model: 'rerank-v3.5', query: 'lighthouse', documents: ['a lighthouse', 'a tree'] }),
    answered: (answer) => expect(answer).toMatchObject({ results: [{ index: 0 }, { index: 1 }] }),
  },
};
const ROUTES = Object.keys(CALLS);

/** The call's failure as its client sees it: the status and the `error` object of the OpenAI shape. */
async function failureOf(route: string, openai: OpenAI, key: string) {
  const failure = await CALLS[route]!.call(openai, key).then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err as { status: number; code: string; type: string; param?: string | null; message: string },
  );
  if (route !== 'rerank') expect(failure).toBeInstanceOf(OpenAI.APIError);
  return failure;
}

/** Each route's failure, named by its route (so that a mismatch says which one). */
async function failuresOf(openai: OpenAI, key: string) {
  const failures = [];
  for (const route of ROUTES) {
    const { status, type, code } = await failureOf(route, openai, key);
    failures.push({ route, status, type, code });
  }
  return failures;
}

const everyRoute = (failure: { status: number; type: string; code: string }) => ROUTES.map((route) => ({ route, ...failure }));

/** The same models on both upstreams: the first channel (priority 10) is tried before the second (0). */
async function twoChannels() {
  const models = [...Object.keys(MEDIA_CHANNELS[OPENAI].models), 'rerank-v3.5'].join(',');
  await mediaChannel(OPENAI, upstream.url, { models, priority: 10 });
  const second = await mediaChannel(OPENAI, backup.url, { models, priority: 0 });
  await harness.reloadCaches();
  return second;
}

describe('refused before any upstream call, nothing charged', () => {
  beforeEach(twoChannels);

  it('on every route: a model without a price, 400 model_price_error', async () => {
    await setOption(harness.prisma, 'ModelPrice', {});
    await setOption(harness.prisma, 'ModelRatio', {});
    await harness.reloadCaches();
    const { key, userId, openai } = await mediaCustomer();
    expect(await failuresOf(openai, key)).toEqual(everyRoute({ status: 400, type: 'invalid_request_error', code: 'model_price_error' }));
    expect([...upstream.requests, ...backup.requests]).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
  });

  it('on every route: a key not allowed the model, 403 model_not_allowed', async () => {
    const { key, userId, openai } = await mediaCustomer({ modelLimitsEnabled: true, modelLimits: 'gpt-4o-mini' });
    expect(await failuresOf(openai, key)).toEqual(everyRoute({ status: 403, type: 'permission_error', code: 'model_not_allowed' }));
    expect([...upstream.requests, ...backup.requests]).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
  });

  it.each([
    ['images/generations', unitCharge(USD_PER_UNIT['dall-e-3'], 1)],
    ['audio/transcriptions', unitCharge(USD_PER_UNIT['whisper-1'], 3 / 60)],
  ])('%s: a balance short of the reservation (%d), 403 insufficient_user_quota', async (route, reservation) => {
    const { key, userId, openai } = await mediaCustomer({ quota: reservation - 1 });
    expect(await failureOf(route, openai, key)).toMatchObject({ status: 403, type: 'insufficient_quota', code: 'insufficient_user_quota' });
    expect([...upstream.requests, ...backup.requests]).toEqual([]);
    await expectNothingCharged(userId, reservation - 1);
  });
});

describe('upstream failures before the first byte', () => {
  it.each<[string, FakeMode]>([
    ['images/generations', 'error500'],
    ['images/edits', 'reset'],
    ['audio/speech', 'reset'],
    ['audio/transcriptions', 'error500'],
    ['rerank', 'error500'],
  ])('%s: after %s on the first channel, answered by the next one, charged once', async (route, mode) => {
    const second = await twoChannels();
    upstream.setMode(mode);
    const { key, openai } = await mediaCustomer();
    CALLS[route]!.answered(await CALLS[route]!.call(openai, key));
    expect(upstream.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: second.id, modelName: CALLS[route]!.model });
    await expectLedgerInvariant(harness.prisma);
  });

  it('an upload is sent again whole after a connection reset: the next channel gets the same multipart, file and all', async () => {
    await twoChannels();
    upstream.setMode('reset');
    const { openai } = await mediaCustomer();
    await openai.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'text' });
    const [failed, retried] = [recorded(upstream.requests), recorded(backup.requests)];
    expect(retried.form).toEqual({
      fields: { model: MEDIA_CHANNELS[OPENAI].models['whisper-1'], response_format: 'text' },
      files: [{ name: 'file', filename: 'a.wav', size: AUDIO.length, contentType: 'audio/wav' }],
    });
    expect(retried.body.includes(AUDIO)).toBe(true);
    expect(retried.body.equals(failed.body)).toBe(true);
    expect(retried.headers['content-type']).toBe(failed.headers['content-type']);
  });

  it("on every route: an upstream 4xx is the client's answer, not retried, nothing charged", async () => {
    await twoChannels();
    upstream.setMode('error400');
    const { key, userId, openai } = await mediaCustomer();
    for (const route of ROUTES) {
      const failure = await failureOf(route, openai, key);
      expect({ route, ...failure }).toMatchObject({ route, status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' });
      expect(failure.message).toContain("Invalid value for 'temperature'");
      expect(failure.message).not.toContain(MEDIA_CHANNELS[OPENAI].key);
    }
    expect(upstream.requests).toHaveLength(ROUTES.length);
    expect(backup.requests).toEqual([]);
    await expectNothingCharged(userId, START_QUOTA);
  });

  it('on every route: every channel failing, 502 upstream_error, nothing charged', async () => {
    await twoChannels();
    upstream.setMode('error500');
    backup.setMode('reset');
    const { key, userId, openai } = await mediaCustomer();
    expect(await failuresOf(openai, key)).toEqual(everyRoute({ status: 502, type: 'upstream_error', code: 'upstream_error' }));
    expect(upstream.requests).toHaveLength(ROUTES.length);
    expect(backup.requests).toHaveLength(ROUTES.length);
    await expectNothingCharged(userId, START_QUOTA);
  });
});
