// docs/api.md 2.5: a client that leaves a translated stream midway closes the upstream call at once
// and is charged for what was delivered, counted by the relay where the provider reported nothing yet.
import { countDeliveredTokens } from '../src/features/relay/tokens';
import { abortOnceReceived, ANTHROPIC, CHAT_CHANNELS, expectLeftStreamCharged, GEMINI, withChatChannels } from './chat-support';
import { createCustomer, harness, openAiClient, relaySuite, resetSuite, upstream } from './harness';

/** Long enough that the answer is far from done when the client leaves. */
const PIECES = 30;
const CHUNK_DELAY_MS = 100;

relaySuite();

beforeAll(() => {
  // The relay loads its tokenizer on first use, holding the event loop for most of a second on this
  // machine; the fake upstream shares this process, so it would see the close only afterwards.
  countDeliveredTokens(['warm up']);
});

beforeEach(async () => {
  await resetSuite();
  await withChatChannels([ANTHROPIC, GEMINI]);
  upstream.setMode('slowDrip', { chunks: PIECES, chunkDelayMs: CHUNK_DELAY_MS });
});

describe.each([['Anthropic', ANTHROPIC], ['Gemini', GEMINI]] as const)('a client aborting a translated %s stream', (_name, type) => {
  it('closes the upstream within 1 s and is charged for the pieces delivered', async () => {
    const customer = await createCustomer(harness.prisma);
    const controller = new AbortController();
    const stream = await openAiClient(harness, customer.key).chat.completions.create(
      { model: CHAT_CHANNELS[type].model, messages: [{ role: 'user', content: 'Tell me a long story' }], stream: true, stream_options: { include_usage: true } },
      { signal: controller.signal },
    );
    const abortedAt = await abortOnceReceived(stream, controller, (chunk) => chunk.choices[0]?.delta.content ?? '', ' hello'.repeat(3));
    const row = await expectLeftStreamCharged(abortedAt, { delivered: 3, pieces: PIECES });
    expect(row.quota).toBe(BigInt(-(row.promptTokens + row.completionTokens)));
  });
});
