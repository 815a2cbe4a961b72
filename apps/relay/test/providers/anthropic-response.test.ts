import { anthropicProvider } from '../../src/providers/anthropic';
import type { FinishReason } from '../../src/core/chat';
import { UpstreamFailure } from '../../src/features/upstream/client';
import { thrownBy } from '../thrown';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const NOW_MS = 1_760_000_000_000;

/** A Messages API answer as the API documents it. */
function message(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [{ type: 'text', text: 'Hi! My name is Claude.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 2095, output_tokens: 503, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ...overrides,
  };
}

describe('Anthropic chat answer', () => {
  beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(NOW_MS));
  afterEach(() => jest.restoreAllMocks());

  it('is one choice with the answer id, the time and the usage', () => {
    expect(anthropicProvider.chat(TEST_CHANNEL, 'm').response(message())).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      created: NOW_MS / 1000,
      choices: [{ index: 0, content: [{ type: 'text', text: 'Hi! My name is Claude.' }], finishReason: 'stop' }],
      usage: { promptTokens: 2095, completionTokens: 503, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    });
  });

  it.each<[string | null, FinishReason]>([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['a_reason_added_later', 'stop'],
    [null, 'stop'],
  ])('maps stop reason %s to %s', (stopReason, finishReason) => {
    expect(anthropicProvider.chat(TEST_CHANNEL, 'm').response(message({ stop_reason: stopReason })).choices[0]?.finishReason).toBe(finishReason);
  });

  it('keeps every block in order: signed thinking, redacted thinking, text and tool calls with their arguments', () => {
    const answer = anthropicProvider.chat(TEST_CHANNEL, 'm').response(
      message({
        content: [
          { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
          { type: 'text', text: 'Checking.', citations: null },
          { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'weather' } },
          { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA', unit: 'celsius' } },
          { type: 'tool_use', id: 'toolu_02', name: 'get_time', input: {} },
        ],
        stop_reason: 'tool_use',
      }),
    );
    expect(answer.choices).toEqual([
      {
        index: 0,
        content: [
          { type: 'reasoning', text: 'The user wants the weather.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
          { type: 'redacted_reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
          { type: 'tool_call', id: 'toolu_02', name: 'get_time', arguments: '{}' },
        ],
        finishReason: 'tool_calls',
      },
    ]);
  });

  it.each<[string, unknown, unknown]>([
    [
      'counts cache reads and writes as prompt tokens and reports them apart',
      { input_tokens: 50, cache_creation_input_tokens: 1000, cache_read_input_tokens: 20000, output_tokens: 300 },
      { promptTokens: 21050, completionTokens: 300, cachedTokens: 20000, cacheWriteTokens: 1000, reasoningTokens: 0 },
    ],
    [
      'reads absent or null cache fields as 0',
      { input_tokens: 12, cache_creation_input_tokens: null, output_tokens: 7 },
      { promptTokens: 12, completionTokens: 7, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    ],
    ['reports none without input tokens', { output_tokens: 7 }, undefined],
    ['reports none for a negative count', { input_tokens: -1, output_tokens: 7 }, undefined],
    ['reports none for a count the ledger cannot hold', { input_tokens: 10, cache_read_input_tokens: 2 ** 31, output_tokens: 7 }, undefined],
    ['reports none for a sum the ledger cannot hold', { input_tokens: 2 ** 30, cache_read_input_tokens: 2 ** 30, output_tokens: 7 }, undefined],
    ['reports none for a fractional count', { input_tokens: 10, output_tokens: 1.5 }, undefined],
    ['reports none without usage', undefined, undefined],
  ])('usage: %s', (_name, usage, expected) => {
    expect(anthropicProvider.chat(TEST_CHANNEL, 'm').response(message({ usage })).usage).toEqual(expected);
  });

  it.each<[string, unknown]>([
    ['not an object', 'Hello'],
    ['an error object', { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }],
    ['no content array', message({ content: 'Hi' })],
    ['no id', message({ id: undefined })],
    ['a text block without text', message({ content: [{ type: 'text' }] })],
    ['a tool call without input', message({ content: [{ type: 'tool_use', id: 'toolu_1', name: 'f' }] })],
  ])('refuses an answer that is %s', (_name, body) => {
    const thrown = thrownBy(() => anthropicProvider.chat(TEST_CHANNEL, 'm').response(body));
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect(thrown).toMatchObject({ kind: 'other', message: 'the upstream answered with an unexpected body' });
  });
});
