// docs/api.md 1.3, 2.4 and 2.6: provider errors of every dialect reach a chat client as OpenAI errors
// its SDK understands; auto_ban reads each provider's words; a translated stream that fails midway
// ends with an error event, then [DONE].
import type { FakeMode } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { ANTHROPIC, CHAT_CHANNELS, GEMINI, postForEvents, readChatStream, settledConsumeRow, settledConsumeRows, withChatChannels } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';

const MESSAGES: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello to me' }];
type TranslatedType = typeof ANTHROPIC | typeof GEMINI;
const DIALECTS: [string, TranslatedType][] = [['Anthropic', ANTHROPIC], ['Gemini', GEMINI]];

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withChatChannels([ANTHROPIC, GEMINI]);
});

async function openai() {
  const customer = await createCustomer(harness.prisma);
  return openAiClient(harness, customer.key);
}

/** The failure of one plain chat call. */
async function failureOf(type: TranslatedType): Promise<InstanceType<typeof OpenAI.APIError>> {
  const failure = await (await openai()).chat.completions.create({ model: CHAT_CHANNELS[type].model, messages: MESSAGES }).catch((err: unknown) => err);
  expect(failure).toBeInstanceOf(OpenAI.APIError);
  return failure as InstanceType<typeof OpenAI.APIError>;
}

/** Per provider, the OpenAI `type` and `code` each fault maps to (code: the provider's own, docs/api.md 1.3). */
const MAPPED: Record<TranslatedType, Partial<Record<FakeMode, { type: string; code: string | number }>>> = {
  [ANTHROPIC]: {
    error400: { type: 'invalid_request_error', code: 'invalid_request_error' },
    error401: { type: 'authentication_error', code: 'authentication_error' },
    error429: { type: 'rate_limit_error', code: 'rate_limit_error' },
  },
  [GEMINI]: {
    error400: { type: 'invalid_request_error', code: 'INVALID_ARGUMENT' },
    error401: { type: 'authentication_error', code: 'UNAUTHENTICATED' },
    error429: { type: 'rate_limit_error', code: 'RESOURCE_EXHAUSTED' },
  },
};

const FAULTS = [
  ['error400', 400, OpenAI.BadRequestError],
  ['error401', 401, OpenAI.AuthenticationError],
  ['error429', 429, OpenAI.RateLimitError],
] as const;

describe.each(DIALECTS)('a %s error', (_name, type) => {
  it.each(FAULTS)('%s is relayed with the upstream status in the OpenAI shape, as the SDK error class', async (mode, status, errorClass) => {
    upstream.setMode(mode);
    const failure = await failureOf(type);
    expect(failure).toBeInstanceOf(errorClass);
    expect(failure.status).toBe(status);
    expect(failure.requestID).toEqual(expect.any(String));
    expect(failure.error).toEqual({
      message: expect.stringMatching(new RegExp(` \\(request id: ${failure.requestID}\\)$`)),
      param: null,
      ...MAPPED[type][mode],
    });
    // Nothing failed on the caller's side: nothing is charged.
    expect(await settledConsumeRows(harness)).toEqual([]);
  });

  it('masks the channel key and URLs in the relayed message', async () => {
    upstream.setMode('error400');
    const failure = await failureOf(type);
    const message = (failure.error as { message: string }).message;
    expect(message).toContain('[url]');
    expect(message).not.toContain(CHAT_CHANNELS[type].key);
    expect(message).not.toMatch(/https?:\/\//);
  });
});

describe('auto_ban on an Anthropic channel', () => {
  it.each([
    ['error401', 401, 'upstream answered 401'],
    ['quotaExhausted', 400, 'upstream quota exhausted'],
  ] as const)('%s disables the channel (status 3) with its reason', async (mode, status, reason) => {
    upstream.setMode(mode);
    const failure = await failureOf(ANTHROPIC);
    expect(failure.status).toBe(status);
    const channel = await harness.prisma.channel.findFirstOrThrow({ where: { type: ANTHROPIC } });
    expect(channel.status).toBe(3);
    expect(channel.statusReason).toContain(reason);
    expect(channel.statusReason).not.toContain(CHAT_CHANNELS[ANTHROPIC].key);
    // Out of routing at once.
    upstream.setMode('ok');
    expect((await failureOf(ANTHROPIC)).status).toBe(503);
  });

  it('a rate limit (429) leaves it enabled', async () => {
    upstream.setMode('error429');
    await failureOf(ANTHROPIC);
    expect((await harness.prisma.channel.findFirstOrThrow({ where: { type: ANTHROPIC } })).status).toBe(1);
  });
});

describe.each(DIALECTS)('a translated %s stream failing midway', (_name, type) => {
  const { model } = CHAT_CHANNELS[type];

  it('makes the SDK throw an APIError after the delivered chunks; the charge is what was delivered', async () => {
    upstream.setMode('errorMidStream');
    const client = await openai();
    const stream = await client.chat.completions.create({ model, messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const texts: string[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toMatch(/overloaded/i);
    expect(texts.join('')).toBe(' hello'.repeat(2));

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ completionTokens: 2, isStream: true });
    // Anthropic reported the prompt in message_start; Gemini reports usage only at the end, so the relay counted it.
    if (type === ANTHROPIC) expect(row.promptTokens).toBe(4);
    else expect(row.promptTokens).toBeGreaterThan(0);
    expect(row.quota).toBe(BigInt(-(row.promptTokens + 2)));
    await expectLedgerInvariant(harness.prisma);
  });

  it('ends with an OpenAI error event, then data: [DONE]', async () => {
    upstream.setMode('errorMidStream');
    const { key } = await createCustomer(harness.prisma);
    const { status, events } = await postForEvents(harness, '/v1/chat/completions', key, { model, messages: MESSAGES, stream: true });
    expect(status).toBe(200);
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2) ?? '{}')).toEqual({
      error: { message: expect.stringMatching(/ \(request id: [^)]+\)$/), type: 'upstream_error', param: null, code: 'upstream_error' },
    });
  });
});

describe('fields a provider cannot honour', () => {
  it('n: 2 to an Anthropic channel is 400 naming n, before any upstream call', async () => {
    const failure = await (await openai()).chat.completions.create({ model: CHAT_CHANNELS[ANTHROPIC].model, messages: MESSAGES, n: 2 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, param: 'n', code: 'invalid_request' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('n: 2 to a Gemini channel asks for two candidates', async () => {
    const completion = await (await openai()).chat.completions.create({ model: CHAT_CHANNELS[GEMINI].model, messages: MESSAGES, n: 2 });
    expect(completion.choices[0]?.message.content).toBe(' hello'.repeat(5));
    expect(upstream.requests[0]?.json).toMatchObject({ generationConfig: { candidateCount: 2 } });
  });
});

describe('a stream that fails before its first event', () => {
  it.each(DIALECTS)('on %s is answered as a plain error (nothing was sent yet)', async (_name, type) => {
    upstream.setMode('error429');
    const client = await openai();
    const failure = await client.chat.completions
      .create({ model: CHAT_CHANNELS[type].model, messages: MESSAGES, stream: true })
      .then((stream) => readChatStream(stream))
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
  });
});
