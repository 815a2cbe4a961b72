// docs/api.md 2.4 and 2.6: one model served by channels of different types; a retry moves across them.
import OpenAI from 'openai';
import { ANTHROPIC, CHAT_CHANNELS, chatChannel, OPENAI, readChatStream, recorded, settledConsumeRow } from './chat-support';
import { backup, createCustomer, harness, openAiClient, relaySuite, resetSuite, setUnitPrices, upstream as primary } from './harness';

const MODEL = CHAT_CHANNELS[ANTHROPIC].model;
const MESSAGES: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];

relaySuite({}, { upstreams: 2 });

/** `claude-sonnet-4-5` on Anthropic (priority 10, first upstream) and on an OpenAI-compatible proxy (priority 0, second). */
async function anthropicThenProxy() {
  const anthropic = await chatChannel(harness.prisma, ANTHROPIC, primary.url, { priority: 10 });
  const proxy = await chatChannel(harness.prisma, OPENAI, backup.url, { priority: 0, models: MODEL, modelMapping: JSON.stringify({ [MODEL]: `anthropic/${MODEL}` }) });
  await harness.reloadCaches();
  return { anthropic, proxy };
}

beforeEach(async () => {
  await resetSuite();
  await setUnitPrices(harness.prisma, [MODEL]);
});

describe('routing across channel types', () => {
  it('uses the Anthropic channel while it is healthy', async () => {
    const { anthropic } = await anthropicThenProxy();
    const { key } = await createCustomer(harness.prisma);
    await openAiClient(harness, key).chat.completions.create({ model: MODEL, messages: MESSAGES });
    expect(recorded(primary.requests).path).toBe('/v1/messages');
    expect(backup.requests).toHaveLength(0);
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: anthropic.id });
  });

  it.each(['error500', 'overloaded', 'reset'] as const)('retries an Anthropic %s on the OpenAI-compatible channel, which answers', async (mode) => {
    const { proxy } = await anthropicThenProxy();
    primary.setMode(mode);
    const { key } = await createCustomer(harness.prisma);
    const completion = await openAiClient(harness, key).chat.completions.create({ model: MODEL, messages: MESSAGES });
    expect(completion.choices[0]?.message.content).toBe(' hello'.repeat(5));
    expect(completion.model).toBe(MODEL);
    expect(primary.requests.map((request) => request.path)).toEqual(['/v1/messages']);
    const retried = recorded(backup.requests);
    expect(retried.path).toBe('/v1/chat/completions');
    expect(retried.headers.authorization).toBe(`Bearer ${CHAT_CHANNELS[OPENAI].key}`);
    expect(retried.json).toMatchObject({ model: `anthropic/${MODEL}`, messages: MESSAGES });
    // Only the attempt that answered is charged.
    expect(await settledConsumeRow(harness)).toMatchObject({ channelId: proxy.id, promptTokens: 2, completionTokens: 5, quota: -7n });
  });

  it('retries a stream whose Anthropic attempt failed before its first event', async () => {
    await anthropicThenProxy();
    primary.setMode('overloaded');
    const { key } = await createCustomer(harness.prisma);
    const stream = await openAiClient(harness, key).chat.completions.create({ model: MODEL, messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const streamed = await readChatStream(stream);
    expect(streamed.content).toBe(' hello'.repeat(5));
    expect(streamed.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 });
    expect(backup.requests).toHaveLength(1);
  });

  it('does not retry a 4xx: the Anthropic error reaches the client', async () => {
    await anthropicThenProxy();
    primary.setMode('error400');
    const { key } = await createCustomer(harness.prisma);
    const failure = await openAiClient(harness, key).chat.completions.create({ model: MODEL, messages: MESSAGES }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(failure).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(backup.requests).toHaveLength(0);
    await harness.relay.ledger.flush();
    expect(await harness.prisma.log.count({ where: { type: 2 } })).toBe(0);
  });
});
