// docs/api.md 1.3 and 2.9: every failure on /v1/messages* comes in Anthropic's shape, with 1.3's
// statuses, as the Anthropic SDK's error classes; upstream errors are relayed masked (an Anthropic
// channel's own type and its 529 kept); a stream that fails or is left midway ends as Anthropic's do
// and costs what was delivered.
import Anthropic from '@anthropic-ai/sdk';
import { createChannel, deleteKeysWithPrefix, redisPrefix } from '@modelgate/testing';
import { countDeliveredTokens } from '../src/features/relay/tokens';
import { type DirectType, expectLeftStreamCharged, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import { ANTHROPIC, anthropicClient, GEMINI, MESSAGES_CHANNELS, modelOf, OPENAI, postMessages, sseEvents, withMessagesChannels } from './messages-support';

const MODEL = modelOf(ANTHROPIC);
const MESSAGES: Anthropic.MessageParam[] = [{ role: 'user', content: 'Say hello to me' }];
const PARAMS = { model: MODEL, max_tokens: 100, messages: MESSAGES };
/** Every test's key (ids restart with the database) starts the minute afresh: see beforeEach. */
const RATE_LIMIT = 8;

relaySuite({ UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '300', UPSTREAM_IDLE_TIMEOUT_MS: '300', MAX_REQUEST_BODY_MB: '1', RELAY_KEY_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });

beforeAll(() => {
  // The relay loads its tokenizer on first use, holding the event loop (and the fake upstream of this
  // process) for most of a second.
  countDeliveredTokens(['warm up']);
});

beforeEach(async () => {
  await resetSuite();
  await deleteKeysWithPrefix(harness.redis, `${redisPrefix()}rl:`);
  await withMessagesChannels();
});

async function sdk(fields: Parameters<typeof createCustomer>[1] = {}) {
  const { key } = await createCustomer(harness.prisma, fields);
  return anthropicClient(harness, key);
}

type SdkError = InstanceType<typeof Anthropic.APIError>;

/** The SDK's error for one call. */
async function failureOf(call: Promise<unknown>): Promise<SdkError> {
  const failure = await call.then(() => undefined, (err: unknown) => err);
  expect(failure).toBeInstanceOf(Anthropic.APIError);
  return failure as SdkError;
}

/** Anthropic's error body with this type (docs/api.md 2.9), and the SDK class for its status. */
function expectAnthropicError(failure: SdkError, errorClass: new (...args: never[]) => SdkError, status: number, type: string): void {
  expect(failure).toBeInstanceOf(errorClass);
  expect(failure.status).toBe(status);
  expect(failure.error).toEqual({ type: 'error', error: { type, message: expect.any(String) } });
  expect(failure.type).toBe(type);
}

describe('gateway errors, as the SDK reads them', () => {
  it('401 authentication_error for a missing, malformed or unknown key', async () => {
    const missing = await postMessages('/v1/messages', {}, PARAMS);
    expect(missing).toMatchObject({ status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'missing API key' } } });
    for (const key of ['not-a-key', `sk-${'x'.repeat(48)}`]) {
      expectAnthropicError(await failureOf(anthropicClient(harness, key).messages.create(PARAMS)), Anthropic.AuthenticationError, 401, 'authentication_error');
    }
    expectAnthropicError(
      await failureOf(anthropicClient(harness, 'sk-unknown', { bearer: true }).messages.countTokens({ model: MODEL, messages: MESSAGES })),
      Anthropic.AuthenticationError,
      401,
      'authentication_error',
    );
  });

  it('400 invalid_request_error for a body that is not JSON and for a missing field', async () => {
    const { key } = await createCustomer(harness.prisma);
    const response = await fetch(`${harness.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: '{"model":' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'request body is not valid JSON' } });
    const client = anthropicClient(harness, key);
    const failure = await failureOf(client.messages.create({ model: MODEL, messages: MESSAGES } as Anthropic.MessageCreateParamsNonStreaming));
    expectAnthropicError(failure, Anthropic.BadRequestError, 400, 'invalid_request_error');
    expect(failure.message).toContain('max_tokens');
    expectAnthropicError(await failureOf(client.messages.countTokens({ model: MODEL, messages: [] })), Anthropic.BadRequestError, 400, 'invalid_request_error');
    expect(upstream.requests).toHaveLength(0);
  });

  it('403 permission_error for a model outside the key allow-list and for a balance below the reservation', async () => {
    const limited = await sdk({ modelLimitsEnabled: true, modelLimits: modelOf(OPENAI) });
    expectAnthropicError(await failureOf(limited.messages.create(PARAMS)), Anthropic.PermissionDeniedError, 403, 'permission_error');
    const poor = await sdk({ quota: 10 });
    const failure = await failureOf(poor.messages.create(PARAMS));
    expectAnthropicError(failure, Anthropic.PermissionDeniedError, 403, 'permission_error');
    expect(failure.message).toMatch(/quota/i);
  });

  it('404 not_found_error for a model no channel serves, 400 for an unpriced one', async () => {
    const client = await sdk();
    expectAnthropicError(await failureOf(client.messages.create({ ...PARAMS, model: 'claude-nothing' })), Anthropic.NotFoundError, 404, 'not_found_error');
    expectAnthropicError(
      await failureOf(client.messages.countTokens({ model: 'claude-nothing', messages: MESSAGES })),
      Anthropic.NotFoundError,
      404,
      'not_found_error',
    );
    await createChannel(harness.prisma, { type: ANTHROPIC, baseUrl: upstream.url, models: 'claude-unpriced' });
    await harness.reloadCaches();
    expectAnthropicError(await failureOf(client.messages.create({ ...PARAMS, model: 'claude-unpriced' })), Anthropic.BadRequestError, 400, 'invalid_request_error');
  });

  it('503 overloaded_error when the channels serving the model are all disabled', async () => {
    await harness.prisma.channel.updateMany({ data: { status: 2 } });
    await harness.reloadCaches();
    const client = await sdk();
    expectAnthropicError(await failureOf(client.messages.create(PARAMS)), Anthropic.ServiceUnavailableError, 503, 'overloaded_error');
  });

  it(`429 rate_limit_error past the key's ${RATE_LIMIT} requests a minute`, async () => {
    const client = await sdk();
    for (let i = 0; i < RATE_LIMIT; i++) await client.messages.countTokens({ model: MODEL, messages: MESSAGES });
    const failure = await failureOf(client.messages.create(PARAMS));
    expectAnthropicError(failure, Anthropic.RateLimitError, 429, 'rate_limit_error');
    expect(failure.headers?.get('retry-after')).toMatch(/^\d+$/);
  });

  it('413 request_too_large for a body over MAX_REQUEST_BODY_MB', async () => {
    const client = await sdk();
    const failure = await failureOf(client.messages.create({ ...PARAMS, messages: [{ role: 'user', content: 'x'.repeat(1024 * 1024 + 1) }] }));
    expectAnthropicError(failure, Anthropic.ContentTooLargeError, 413, 'request_too_large');
  });

  it.each([
    ['every attempt answers 5xx', 'error500', 502, Anthropic.InternalServerError],
    ['the upstream resets the connection', 'reset', 502, Anthropic.InternalServerError],
    ['the upstream does not answer in time', 'hangBeforeHeaders', 504, Anthropic.GatewayTimeoutError],
  ] as const)('%s (%s): %i api_error, nothing charged', async (_name, mode, status, errorClass) => {
    upstream.setMode(mode);
    const client = await sdk();
    expectAnthropicError(await failureOf(client.messages.create(PARAMS)), errorClass, status, 'api_error');
    expect(await settledConsumeRows(harness)).toEqual([]);
  });
});

describe('upstream errors', () => {
  it("an Anthropic channel's 529 overloaded_error on the last attempt is passed on as it is", async () => {
    upstream.setMode('overloaded');
    const failure = await failureOf((await sdk()).messages.create(PARAMS));
    expectAnthropicError(failure, Anthropic.OverloadedError, 529, 'overloaded_error');
    expect(failure.message).toContain('Overloaded');
  });

  it.each([
    ['Anthropic', ANTHROPIC],
    ['OpenAI-compatible', OPENAI],
    ['Gemini', GEMINI],
  ] as [string, DirectType][])('a %s 4xx is relayed with its status, message masked', async (_name, type) => {
    upstream.setMode('error400');
    const failure = await failureOf((await sdk()).messages.create({ ...PARAMS, model: modelOf(type) }));
    expectAnthropicError(failure, Anthropic.BadRequestError, 400, 'invalid_request_error');
    expect(failure.message).not.toContain(MESSAGES_CHANNELS[type].key);
    expect(failure.message).not.toMatch(/https?:\/\//);
  });

  it.each([
    ['Anthropic', ANTHROPIC],
    ['OpenAI-compatible', OPENAI],
  ] as [string, DirectType][])("a %s rate limit (429) is the SDK's RateLimitError", async (_name, type) => {
    upstream.setMode('error429');
    expectAnthropicError(await failureOf((await sdk()).messages.create({ ...PARAMS, model: modelOf(type) })), Anthropic.RateLimitError, 429, 'rate_limit_error');
  });
});

describe.each([
  ['an Anthropic channel (passed through)', ANTHROPIC],
  ['an OpenAI-compatible channel (translated)', OPENAI],
] as [string, DirectType][])('a stream on %s', (_name, type) => {
  const model = modelOf(type);

  it('failing midway ends with an error event the SDK raises; the delivered text is charged', async () => {
    upstream.setMode('errorMidStream');
    const stream = (await sdk()).messages.stream({ ...PARAMS, model });
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const failure = await failureOf(stream.finalMessage());
    expect(failure.message).toContain('upstream error: ');
    expect(texts.join('')).toBe(' hello'.repeat(2));

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ completionTokens: 2, isStream: true });
    expect(row.promptTokens).toBeGreaterThan(0);
    await expectLedgerInvariant(harness.prisma);
  });

  it("ends with Anthropic's error event on the wire, an Anthropic channel's overload named as such", async () => {
    upstream.setMode('errorMidStream');
    const { key } = await createCustomer(harness.prisma);
    const { status, text } = await postMessages('/v1/messages', { 'x-api-key': key }, { ...PARAMS, model, stream: true });
    expect(status).toBe(200);
    const last = sseEvents(text).at(-1);
    // The fake Anthropic fails with overloaded_error (which Anthropic's SDKs retry), the fake OpenAI with a server error.
    const errorType = type === ANTHROPIC ? 'overloaded_error' : 'api_error';
    expect(last).toEqual({ event: 'error', data: { type: 'error', error: { type: errorType, message: expect.stringMatching(/^upstream error: /) } } });
  });

  it('left by its client midway closes the upstream call and is charged what was delivered', async () => {
    const pieces = 30;
    upstream.setMode('slowDrip', { chunks: pieces, chunkDelayMs: 100 });
    const controller = new AbortController();
    const stream = (await sdk()).messages.stream({ ...PARAMS, model, max_tokens: 1000 }, { signal: controller.signal });
    let received = '';
    let abortedAt = 0;
    stream.on('text', (text) => {
      received += text;
      if (received === ' hello'.repeat(3)) {
        abortedAt = Date.now();
        controller.abort();
      }
    });
    const ended = await stream.finalMessage().then(() => undefined, (err: unknown) => err);
    expect(ended).toBeInstanceOf(Anthropic.APIUserAbortError);
    await expectLeftStreamCharged(abortedAt, { delivered: 3, pieces });
  });
});
