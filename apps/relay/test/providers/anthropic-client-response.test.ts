// A whole answer of another provider written as Anthropic's Message object, for a /v1/messages
// client (docs/api.md 2.6, 2.9): content blocks, stop reasons and usage as Anthropic counts it.
import { chatResponseToAnthropic } from '../../src/dialects/anthropic/from-internal';
import { chatResponseOf } from '../../src/providers/anthropic/response';
import type { ChatResponse, ChatUsage, ContentPart, FinishReason } from '../../src/core/chat';

const USAGE: ChatUsage = { promptTokens: 100, completionTokens: 20, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };

function response(content: ContentPart[], finishReason: FinishReason = 'stop', id = 'chatcmpl-9'): ChatResponse {
  return { id, created: 1_760_000_000, choices: [{ index: 0, content, finishReason }] };
}

describe('chatResponseToAnthropic', () => {
  it('writes the Message object as Anthropic answers it', () => {
    expect(chatResponseToAnthropic(response([{ type: 'text', text: 'Hello!' }]), 'claude-sonnet-4-5', USAGE)).toStrictEqual({
      id: 'msg_chatcmpl-9',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 20 },
    });
  });

  it('keeps an id that already is a message id', () => {
    expect(chatResponseToAnthropic(response([], 'stop', 'msg_01XFD'), 'm', USAGE).id).toBe('msg_01XFD');
  });

  it.each<[string, ContentPart[], unknown[]]>([
    [
      'signed reasoning as thinking, redacted reasoning, text, a tool call with its input parsed',
      [
        { type: 'reasoning', text: 'Need the tool.', signature: 'EqQBCkYI' },
        { type: 'redacted_reasoning', data: 'EmwKAhgB' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      [
        { type: 'thinking', thinking: 'Need the tool.', signature: 'EqQBCkYI' },
        { type: 'redacted_thinking', data: 'EmwKAhgB' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    ],
    [
      "reasoning without a signature (Gemini's, an OpenAI-compatible model's) with signature ''",
      [{ type: 'reasoning', text: 'Hmm.' }, { type: 'text', text: 'Yes.' }],
      [
        { type: 'thinking', thinking: 'Hmm.', signature: '' },
        { type: 'text', text: 'Yes.' },
      ],
    ],
    [
      'consecutive texts as one block, consecutive reasoning as one until its signature, empty pieces as none',
      [
        { type: 'reasoning', text: 'A' },
        { type: 'reasoning', text: 'B' },
        { type: 'reasoning', text: '', signature: 'sig1' },
        { type: 'reasoning', text: 'C', signature: 'sig2' },
        { type: 'reasoning', text: '' },
        { type: 'text', text: 'one ' },
        { type: 'text', text: '' },
        { type: 'text', text: 'two' },
      ],
      [
        { type: 'thinking', thinking: 'AB', signature: 'sig1' },
        { type: 'thinking', thinking: 'C', signature: 'sig2' },
        { type: 'text', text: 'one two' },
      ],
    ],
    [
      "a signature alone (Gemini's on the part after its thoughts) as an empty thinking block",
      [
        { type: 'text', text: 'Sure.' },
        { type: 'reasoning', text: '', signature: 'gem-sig' },
        { type: 'tool_call', id: 'call_x', name: 'f', arguments: '{}' },
      ],
      [
        { type: 'text', text: 'Sure.' },
        { type: 'thinking', thinking: '', signature: 'gem-sig' },
        { type: 'tool_use', id: 'call_x', name: 'f', input: {} },
      ],
    ],
    [
      'tool calls with no, broken and non-object arguments as input {}',
      [
        { type: 'tool_call', id: 'c1', name: 'a', arguments: '' },
        { type: 'tool_call', id: 'c2', name: 'b', arguments: '{"city":' },
        { type: 'tool_call', id: 'c3', name: 'c', arguments: '[1]' },
      ],
      [
        { type: 'tool_use', id: 'c1', name: 'a', input: {} },
        { type: 'tool_use', id: 'c2', name: 'b', input: {} },
        { type: 'tool_use', id: 'c3', name: 'c', input: {} },
      ],
    ],
  ])('writes %s', (_name, content, expected) => {
    expect(chatResponseToAnthropic(response(content), 'm', USAGE).content).toEqual(expected);
  });

  it.each<[FinishReason, string]>([
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['content_filter', 'refusal'],
  ])('writes finish reason %s as stop_reason %s, which reads back as the same reason', (finish, stopReason) => {
    const message = chatResponseToAnthropic(response([], finish), 'm', USAGE);
    expect(message.stop_reason).toBe(stopReason);
    expect(chatResponseOf(message).choices[0]?.finishReason).toBe(finish);
  });

  it('writes input_tokens without cache reads and writes, which Anthropic reports apart', () => {
    const usage: ChatUsage = { promptTokens: 1200, completionTokens: 80, cachedTokens: 1000, cacheWriteTokens: 150, reasoningTokens: 30 };
    const message = chatResponseToAnthropic(response([{ type: 'text', text: 'x' }]), 'm', usage);
    expect(message.usage).toEqual({ input_tokens: 50, cache_creation_input_tokens: 150, cache_read_input_tokens: 1000, output_tokens: 80 });
    // Read back by the Anthropic provider, the counts are the same.
    expect(chatResponseOf(message).usage).toEqual({ ...usage, reasoningTokens: 0 });
  });

  it('writes choice 0 only (Anthropic has no n), an empty answer when there is none', () => {
    const two: ChatResponse = {
      id: 'x',
      created: 1,
      choices: [
        { index: 1, content: [{ type: 'text', text: 'second' }], finishReason: 'length' },
        { index: 0, content: [{ type: 'text', text: 'first' }], finishReason: 'stop' },
      ],
    };
    expect(chatResponseToAnthropic(two, 'm', USAGE)).toMatchObject({ content: [{ type: 'text', text: 'first' }], stop_reason: 'end_turn' });
    expect(chatResponseToAnthropic({ id: 'x', created: 1, choices: [] }, 'm', USAGE)).toMatchObject({ content: [], stop_reason: 'end_turn' });
  });
});
