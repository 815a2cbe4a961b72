// docs/api.md 1.3, 2.5 and 2.10: upstream failures reach a Responses client in OpenAI's shapes (an
// error answer before the first byte, `response.failed` after it), and a stream cut by the upstream
// or by the client is charged for what was delivered.
import { FAKE_TEXT_PIECE } from '@modelgate/testing/fake-upstream';
import OpenAI from 'openai';
import { countDeliveredTokens } from '../src/features/relay/tokens';
import { abortOnceReceived, CHAT_CHANNELS, expectLeftStreamCharged, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';
import { named, NATIVE, postResponses, ROUTES, sseEvents, streamResponse, VIA_ANTHROPIC, withRoute } from './responses-support';

const QUESTION = 'Say hello to me';

relaySuite();

beforeAll(() => {
  // The relay loads its tokenizer on first use, holding the event loop for most of a second on this
  // machine; the fake upstream shares this process, so it would see a close only afterwards.
  countDeliveredTokens(['warm up']);
});

beforeEach(async () => {
  await resetSuite();
});

async function openai() {
  const customer = await createCustomer(harness.prisma);
  return openAiClient(harness, customer.key);
}

describe.each(named(ROUTES))('on the %s channel', (_name, route) => {
  let model: string;
  beforeEach(async () => {
    model = await withRoute(route);
  });

  it.each([
    ['error400', 400, OpenAI.BadRequestError],
    ['error429', 429, OpenAI.RateLimitError],
  ] as const)('%s is relayed with the upstream status in the OpenAI shape, masked, uncharged', async (mode, status, errorClass) => {
    upstream.setMode(mode);
    const failure = await (await openai()).responses.create({ model, input: QUESTION }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(errorClass);
    const { error, requestID } = failure as InstanceType<typeof OpenAI.APIError>;
    expect(error).toMatchObject({ message: expect.stringMatching(new RegExp(` \\(request id: ${requestID}\\)$`)), type: expect.any(String) });
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
    const message = (error as { message: string }).message;
    expect(message).not.toContain(CHAT_CHANNELS[route.type].key);
    expect(message).not.toMatch(/https?:\/\//);
    expect(await settledConsumeRows(harness)).toEqual([]);
  });

  it('a stream failing midway ends with response.failed; the SDK keeps the delivered text; charged for it', async () => {
    upstream.setMode('errorMidStream');
    const { events, response } = await streamResponse(await openai(), { model, input: QUESTION });
    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
    expect(failed.type).toBe('response.failed');
    expect(failed.sequence_number).toBe(events.length - 1);
    expect(failed.response).toMatchObject({ id: created.response.id, status: 'failed', model, error: { code: 'server_error' } });
    expect(failed.response.error?.message).toMatch(/ \(request id: [^)]+\)$/);
    expect(response).toMatchObject({ status: 'failed', output_text: FAKE_TEXT_PIECE.repeat(2) });

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ completionTokens: 2, isStream: true });
    expect(row.promptTokens).toBeGreaterThan(0);
    expect(row.quota).toBe(BigInt(-(row.promptTokens + 2)));
    await expectLedgerInvariant(harness.prisma);
  });

  it('a stream that fails before its first event is answered as a plain error', async () => {
    upstream.setMode('error429');
    const failure = await streamResponse(await openai(), { model, input: QUESTION }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
  });
});

describe("an OpenAI upstream's in-stream error", () => {
  it("reaches the client as the relay's response.failed, in the upstream's words, not as the upstream's error event", async () => {
    const model = await withRoute(NATIVE);
    upstream.setMode('errorMidStream');
    const { key } = await createCustomer(harness.prisma);
    const { status, text } = await postResponses(key, { model, input: QUESTION, stream: true });
    expect(status).toBe(200);
    const last = sseEvents(text).at(-1);
    expect(last?.event).toBe('response.failed');
    expect(last?.data).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: expect.stringContaining('upstream error: The server had an error') } } });
    expect(sseEvents(text).filter((event) => event.event === 'error')).toEqual([]);
  });
});

/** Long enough that the answer is far from done when the client leaves. */
const PIECES = 30;

describe.each(named([NATIVE, VIA_ANTHROPIC]))('a client leaving a stream on the %s channel', (_name, route) => {
  it('closes the upstream within 1 s and is charged for the pieces delivered', async () => {
    const model = await withRoute(route);
    upstream.setMode('slowDrip', { chunks: PIECES, chunkDelayMs: 100 });
    const controller = new AbortController();
    const stream = await (await openai()).responses.create({ model, input: 'Tell me a long story', stream: true }, { signal: controller.signal });
    const textOf = (event: OpenAI.Responses.ResponseStreamEvent) => (event.type === 'response.output_text.delta' ? event.delta : '');
    const abortedAt = await abortOnceReceived(stream, controller, textOf, FAKE_TEXT_PIECE.repeat(3));
    const row = await expectLeftStreamCharged(abortedAt, { delivered: 3, pieces: PIECES });
    expect(row.quota).toBe(BigInt(-(row.promptTokens + row.completionTokens)));
  });
});
