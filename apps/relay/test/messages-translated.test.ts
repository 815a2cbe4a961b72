// docs/api.md 2.6 and 2.9: `POST /v1/messages` on OpenAI-compatible and Gemini channels, translated
// both ways: the Anthropic SDK gets Anthropic's answers and event sequence (its stream helper
// assembles them), tool calls round-trip with their ids, and the provider's usage is billed.
import type Anthropic from '@anthropic-ai/sdk';
import { FAKE_TEXT_PIECE, FAKE_THOUGHT, FAKE_THOUGHT_TOKENS, FAKE_TOOL_ARGUMENTS } from '@modelgate/testing/fake-upstream';
import { type DirectType, recorded, settledConsumeRow, settledConsumeRows } from './chat-support';
import { createCustomer, expectLedgerInvariant, harness, relaySuite, resetSuite, upstream } from './harness';
import { anthropicClient, chargeOf, GEMINI, MESSAGES_CHANNELS, OPENAI, postMessages, sseEvents, withMessagesChannels } from './messages-support';

const SYSTEM = 'Be brief.';
const QUESTION = 'Say hello to me';
/** The fakes count one token per word: 2 + 4. */
const PROMPT_TOKENS = 6;
const ANSWER = FAKE_TEXT_PIECE.repeat(5);

const WEATHER_TOOL: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const TYPES: [string, DirectType][] = [['OpenAI-compatible', OPENAI], ['Gemini', GEMINI]];

relaySuite();

beforeEach(async () => {
  await resetSuite();
  await withMessagesChannels([OPENAI, GEMINI]);
});

async function client() {
  const { key } = await createCustomer(harness.prisma);
  return { key, anthropic: anthropicClient(harness, key) };
}

const textOf = (message: Anthropic.Message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');

/** Where the channel's request went: its own dialect's operation, for the renamed model. */
function expectUpstreamOperation(type: DirectType, stream: boolean, index = 0): Record<string, unknown> {
  const request = recorded(upstream.requests, index);
  const { upstreamModel } = MESSAGES_CHANNELS[type];
  if (type === OPENAI) {
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.json).toMatchObject({ model: upstreamModel, ...(stream ? { stream: true } : {}) });
  } else {
    expect(request.path).toBe(`/v1beta/models/${upstreamModel}:${stream ? 'streamGenerateContent' : 'generateContent'}`);
  }
  return request.json;
}

describe.each(TYPES)('a %s channel (translated)', (_name, type) => {
  const model = MESSAGES_CHANNELS[type].model;
  const params = { model, max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user' as const, content: QUESTION }] };

  it('answers with an Anthropic Message: the text, the model asked for, end_turn, the provider usage', async () => {
    const { anthropic } = await client();
    const message = await anthropic.messages.create(params);
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn' });
    expect(message.id).toMatch(/^msg_/);
    expect(textOf(message)).toBe(ANSWER);
    expect(message.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: 5 });
    const json = expectUpstreamOperation(type, false);
    if (type === OPENAI) expect(json.messages).toEqual([{ role: 'system', content: SYSTEM }, { role: 'user', content: QUESTION }]);
    else expect(json.systemInstruction).toMatchObject({ parts: [{ text: SYSTEM }] });

    const row = await settledConsumeRow(harness);
    expect(row).toMatchObject({ modelName: model, promptTokens: PROMPT_TOKENS, completionTokens: 5, isStream: false });
    expect(row.quota).toBe(BigInt(-chargeOf({ prompt: PROMPT_TOKENS, completion: 5 })));
    await expectLedgerInvariant(harness.prisma);
  });

  it("streams Anthropic's event sequence, which the SDK's stream helper assembles", async () => {
    const { anthropic, key } = await client();
    const message = await anthropic.messages.stream(params).finalMessage();
    expect(message).toMatchObject({ model, stop_reason: 'end_turn', usage: { output_tokens: 5 } });
    expect(textOf(message)).toBe(ANSWER);
    expectUpstreamOperation(type, true);

    const { text } = await postMessages('/v1/messages', { 'x-api-key': key }, { ...params, stream: true });
    const names = sseEvents(text).map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(names.filter((name) => name === 'content_block_delta')).toHaveLength(5);

    const rows = await settledConsumeRows(harness);
    expect(rows.map((row) => [row.isStream, row.promptTokens, row.completionTokens])).toEqual([[true, PROMPT_TOKENS, 5], [true, PROMPT_TOKENS, 5]]);
  });

  it.each([
    ['whole', false],
    ['streamed', true],
  ])("returns the provider's reasoning as a thinking block (%s)", async (_mode, stream) => {
    const { anthropic } = await client();
    // Claude Code's way of asking for reasoning on current models: adaptive thinking at an effort.
    const thinking = { ...params, thinking: { type: 'adaptive' as const }, output_config: { effort: 'high' as const } };
    const message = stream ? await anthropic.messages.stream(thinking).finalMessage() : await anthropic.messages.create(thinking);
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: FAKE_THOUGHT });
    expect(textOf(message)).toBe(ANSWER);
    expect(message.usage.output_tokens).toBe(5 + FAKE_THOUGHT_TOKENS);
  });

  it.each([
    ['whole', false],
    ['streamed', true],
  ])('round-trips a tool call (%s): tool_use with its id, then the tool_result in the provider dialect', async (_mode, stream) => {
    const { anthropic } = await client();
    const first = { ...params, tools: [WEATHER_TOOL], messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] };
    const answer = stream ? await anthropic.messages.stream(first).finalMessage() : await anthropic.messages.create(first);
    expect(answer.stop_reason).toBe('tool_use');
    const toolUse = answer.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: FAKE_TOOL_ARGUMENTS, id: expect.any(String) });
    if (!toolUse) throw new Error('no tool call');

    const second = await anthropic.messages.create({
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: answer.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '18 degrees and sunny' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).toBe(ANSWER);

    const json = expectUpstreamOperation(type, false, 1);
    if (type === OPENAI) {
      expect(json.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.input_schema } }]);
      expect(json.messages).toEqual(expect.arrayContaining([
        expect.objectContaining({ role: 'assistant', tool_calls: [{ id: toolUse.id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(FAKE_TOOL_ARGUMENTS) } }] }),
        { role: 'tool', tool_call_id: toolUse.id, content: '18 degrees and sunny' },
      ]));
    } else {
      const parts = (json.contents as { parts: Record<string, unknown>[] }[]).flatMap((content) => content.parts);
      expect(parts).toEqual(expect.arrayContaining([
        expect.objectContaining({ functionCall: expect.objectContaining({ name: 'get_weather', args: FAKE_TOOL_ARGUMENTS }) }),
        expect.objectContaining({ functionResponse: expect.objectContaining({ name: 'get_weather' }) }),
      ]));
    }
  });
});
