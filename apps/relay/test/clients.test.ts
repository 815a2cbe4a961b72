// docs/api.md 2.7: the chat clients people actually use, pointed at the relay, on translated channels:
// the Vercel AI SDK's `.chat()` model and LangChain's ChatOpenAI, each plain and streaming.
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import { ANTHROPIC, CHAT_CHANNELS, type DirectType, GEMINI, settledConsumeRows, withChatChannels } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';

const ANSWER = ' hello'.repeat(5);
/** "Say hello to me": 4 prompt tokens at the fakes. */
const PROMPT = 'Say hello to me';
const TYPES: [string, DirectType][] = [['Anthropic', ANTHROPIC], ['Gemini', GEMINI]];

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withChatChannels([ANTHROPIC, GEMINI]);
});

/** Both calls reached the provider in its dialect and were charged once each. */
async function expectTwoChargedCalls(type: DirectType): Promise<void> {
  expect(upstream.requests.map((request) => request.dialect)).toEqual(type === ANTHROPIC ? ['anthropic', 'anthropic'] : ['gemini', 'gemini']);
  const rows = await settledConsumeRows(harness);
  expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens])).toEqual([[false, 4, 5], [true, 4, 5]]);
  await expectLedgerInvariant(harness.prisma);
}

describe.each(TYPES)('the Vercel AI SDK on the %s channel', (_name, type) => {
  it('generateText and streamText through createOpenAI().chat()', async () => {
    const { key } = await createCustomer(harness.prisma);
    const model = createOpenAI({ baseURL: `${harness.url}/v1`, apiKey: key }).chat(CHAT_CHANNELS[type].model);

    const generated = await generateText({ model, prompt: PROMPT, maxRetries: 0 });
    expect(generated.text).toBe(ANSWER);
    expect(generated.finishReason).toBe('stop');
    expect(generated.usage).toMatchObject({ inputTokens: 4, outputTokens: 5, totalTokens: 9 });

    const streamed = streamText({ model, prompt: PROMPT, maxRetries: 0 });
    const pieces: string[] = [];
    for await (const piece of streamed.textStream) pieces.push(piece);
    expect(pieces.join('')).toBe(ANSWER);
    expect(pieces.length).toBeGreaterThan(1);
    expect(await streamed.usage).toMatchObject({ inputTokens: 4, outputTokens: 5 });
    await expectTwoChargedCalls(type);
  });
});

describe.each(TYPES)("LangChain's ChatOpenAI on the %s channel", (_name, type) => {
  it('invoke and stream through configuration.baseURL', async () => {
    const { key } = await createCustomer(harness.prisma);
    const chat = new ChatOpenAI({ model: CHAT_CHANNELS[type].model, apiKey: key, maxRetries: 0, configuration: { baseURL: `${harness.url}/v1` } });

    const message = await chat.invoke(PROMPT);
    expect(message.content).toBe(ANSWER);
    expect(message.usage_metadata).toMatchObject({ input_tokens: 4, output_tokens: 5, total_tokens: 9 });

    const pieces: string[] = [];
    for await (const chunk of await chat.stream(PROMPT)) if (typeof chunk.content === 'string' && chunk.content !== '') pieces.push(chunk.content);
    expect(pieces.join('')).toBe(ANSWER);
    expect(pieces.length).toBeGreaterThan(1);
    await expectTwoChargedCalls(type);
  });
});
