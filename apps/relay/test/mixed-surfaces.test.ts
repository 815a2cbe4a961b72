// docs/api.md 2.5: one customer's concurrent burst over every surface and every channel type, plain
// and streamed, leaves an exact ledger: one consume row per call, and quota = sum of log deltas.
import Anthropic from '@anthropic-ai/sdk';
import { ANTHROPIC, CHAT_CHANNELS, CHAT_MODELS, GEMINI, OPENAI, withChatChannels } from './chat-support';
import { consumeLogs, createCustomer, expectLedgerInvariant, harness, MODEL, openAiChannel, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream } from './harness';

relaySuite();

beforeEach(() => resetSuite({ chunks: 3, chunkDelayMs: 2 }));

const TYPES = [OPENAI, ANTHROPIC, GEMINI] as const;

describe('a mixed burst of every surface', () => {
  it('charges each call once and keeps every balance equal to its log rows', async () => {
    await withChatChannels([...TYPES]);
    await setUnitPrices(harness.prisma, [MODEL, ...CHAT_MODELS]);
    await openAiChannel(harness.prisma, upstream.url);
    await harness.reloadCaches();
    const customer = await createCustomer(harness.prisma, { quota: 50_000_000 });
    const openai = openAiClient(harness, customer.key);
    const anthropic = new Anthropic({ baseURL: harness.url, apiKey: customer.key, maxRetries: 0 });

    const calls: Promise<unknown>[] = [];
    for (const type of TYPES) {
      const { model } = CHAT_CHANNELS[type];
      for (const stream of [false, true]) {
        calls.push(
          stream
            ? openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'burst one' }], stream: true }).then(async (s) => {
                for await (const chunk of s) void chunk;
              })
            : openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'burst one' }] }),
          stream
            ? anthropic.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'burst two' }] }).finalMessage()
            : anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'burst two' }] }),
          stream
            ? openai.responses.create({ model, input: 'burst three', stream: true }).then(async (s) => {
                for await (const event of s) void event;
              })
            : openai.responses.create({ model, input: 'burst three' }),
        );
      }
    }
    calls.push(
      openai.completions.create({ model: MODEL, prompt: 'burst four' }),
      fetch(`${harness.url}/v1beta/models/${CHAT_CHANNELS[GEMINI].model}:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': customer.key, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'burst five' }] }] }),
      }).then((response) => expect(response.status).toBe(200)),
    );
    await Promise.all(calls);

    await harness.relay.ledger.flush();
    const rows = await consumeLogs(harness.prisma);
    expect(rows).toHaveLength(calls.length);
    // A consume row's quota is the (negative) change of the balance.
    expect(rows.every((row) => row.quota < 0)).toBe(true);
    const perModel = (model: string) => rows.filter((row) => row.modelName === model).length;
    // Three surfaces, plain and streamed, per chat model; Gemini's own surface and completions once.
    expect([...TYPES.map((type) => perModel(CHAT_CHANNELS[type].model)), perModel(MODEL)]).toEqual([6, 6, 7, 1]);
    await expectLedgerInvariant(harness.prisma);
  });
});
