// Gemini generateContent answers in the internal form (docs/api.md 2.6).
import type { ChatUsage } from '../../src/core/chat';
import { geminiProvider } from '../../src/providers/gemini';
import { UpstreamFailure } from '../../src/features/upstream/client';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const NOW_MS = 1_790_000_000_500;

beforeAll(() => {
  jest.useFakeTimers({ now: NOW_MS });
});
afterAll(() => {
  jest.useRealTimers();
});

function answer(candidate: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { responseId: 'resp-1', modelVersion: 'gemini-2.5-flash', candidates: [candidate], ...extra };
}

function textCandidate(finishReason: string | undefined, parts: unknown[] = [{ text: 'Hi.' }]): Record<string, unknown> {
  return { content: { role: 'model', parts }, finishReason, index: 0 };
}

describe('Gemini answer: finish reasons', () => {
  it.each<[string | undefined, boolean, string]>([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    [undefined, true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['OTHER', false, 'stop'],
    ['FINISH_REASON_UNSPECIFIED', false, 'stop'],
  ])('%s (function call: %s) -> %s', (finishReason, withCall, expected) => {
    const parts = withCall ? [{ functionCall: { name: 'f', args: {} } }] : [{ text: 'Hi.' }];
    const [choice] = geminiProvider.chat(TEST_CHANNEL, 'm').response(answer(textCandidate(finishReason, parts))).choices;
    expect(choice?.finishReason).toBe(expected);
  });
});

describe('Gemini answer: content', () => {
  it.each<[string, unknown[], unknown[], string]>([
    ['plain text', [{ text: 'Hello' }, { text: ' world' }], [{ type: 'text', text: 'Hello' }, { type: 'text', text: ' world' }], 'stop'],
    [
      'a thought, then the answer carrying the signature',
      [{ text: 'Think first.', thought: true }, { text: 'Answer.', thoughtSignature: 'sig-1' }],
      [{ type: 'reasoning', text: 'Think first.', signature: 'sig-1' }, { type: 'text', text: 'Answer.' }],
      'stop',
    ],
    [
      'a signature without thoughts before it stands as empty reasoning',
      [{ text: 'Answer.', thoughtSignature: 'sig-1' }],
      [{ type: 'reasoning', text: '', signature: 'sig-1' }, { type: 'text', text: 'Answer.' }],
      'stop',
    ],
    [
      'a thought part carrying its own signature',
      [{ text: 'Hmm.', thought: true, thoughtSignature: 'sig-2' }, { text: 'Done.' }],
      [{ type: 'reasoning', text: 'Hmm.', signature: 'sig-2' }, { type: 'text', text: 'Done.' }],
      'stop',
    ],
    [
      'function calls with and without ids; only the first of parallel calls is signed',
      [
        { text: 'Weather for two.', thought: true },
        { functionCall: { id: 'fc-7', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-3' },
        { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        { functionCall: { name: 'ping' } },
      ],
      [
        { type: 'reasoning', text: 'Weather for two.', signature: 'sig-3' },
        { type: 'tool_call', id: 'fc-7', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'tool_call', id: 'call_resp-1_0', name: 'get_weather', arguments: '{"city":"Rome"}' },
        { type: 'tool_call', id: 'call_resp-1_1', name: 'ping', arguments: '{}' },
      ],
      'tool_calls',
    ],
    ['parts it does not know are skipped', [{ executableCode: { code: 'print(1)' } }, { text: '' }, { text: 'ok' }], [{ type: 'text', text: 'ok' }], 'stop'],
  ])('%s', (_, parts, content, finishReason) => {
    const response = geminiProvider.chat(TEST_CHANNEL, 'm').response(answer(textCandidate('STOP', parts)));
    expect(response.choices).toEqual([{ index: 0, content, finishReason }]);
  });

  it('answers with Gemini id and the current time', () => {
    const response = geminiProvider.chat(TEST_CHANNEL, 'm').response(answer(textCandidate('STOP')));
    expect(response.id).toBe('resp-1');
    expect(response.created).toBe(Math.floor(NOW_MS / 1000));
  });

  it('makes up an id, unique tool call ids included, when Gemini sent none', () => {
    const body = { candidates: [textCandidate('STOP', [{ functionCall: { name: 'f', args: {} } }])] };
    const first = geminiProvider.chat(TEST_CHANNEL, 'm').response(body);
    const second = geminiProvider.chat(TEST_CHANNEL, 'm').response(body);
    expect(first.id).not.toBe(second.id);
    expect(first.choices[0]?.content).toEqual([{ type: 'tool_call', id: `call_${first.id}_0`, name: 'f', arguments: '{}' }]);
  });

  it('keeps every candidate as a choice, by its index', () => {
    const response = geminiProvider.chat(TEST_CHANNEL, 'm').response({
      responseId: 'r',
      candidates: [
        { index: 1, content: { parts: [{ text: 'B' }] }, finishReason: 'STOP' },
        { content: { parts: [{ text: 'A' }] }, finishReason: 'MAX_TOKENS' },
        { index: 2, finishReason: 'SAFETY' },
      ],
    });
    expect(response.choices).toEqual([
      { index: 1, content: [{ type: 'text', text: 'B' }], finishReason: 'stop' },
      { index: 1, content: [{ type: 'text', text: 'A' }], finishReason: 'length' },
      { index: 2, content: [], finishReason: 'content_filter' },
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a blocked prompt', { promptFeedback: { blockReason: 'SAFETY' } }, 'content_filter'],
    ['no candidates at all', {}, 'stop'],
  ])('%s answers one empty choice ending %s', (_, body, finishReason) => {
    const response = geminiProvider.chat(TEST_CHANNEL, 'm').response({ responseId: 'r', ...body, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } });
    expect(response.choices).toEqual([{ index: 0, content: [], finishReason }]);
    expect(response.usage).toEqual({ promptTokens: 9, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['an array', [{ candidates: [] }]],
    ['a string', 'ok'],
    ['candidates that are not a list', { candidates: { text: 'x' } }],
    ['a candidate that is not an object', { candidates: ['x'] }],
  ])('refuses %s as a malformed answer', (_, body) => {
    expect(() => geminiProvider.chat(TEST_CHANNEL, 'm').response(body)).toThrow(UpstreamFailure);
    expect(() => geminiProvider.chat(TEST_CHANNEL, 'm').response(body)).toThrow(expect.objectContaining({ kind: 'other' }));
  });
});

describe('Gemini answer: usage', () => {
  it.each<[string, unknown, ChatUsage | undefined]>([
    [
      'plain',
      { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      { promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    ],
    [
      'cached prompt, thoughts and tool-use prompt',
      { promptTokenCount: 1000, cachedContentTokenCount: 800, toolUsePromptTokenCount: 20, candidatesTokenCount: 50, thoughtsTokenCount: 120 },
      { promptTokens: 1020, completionTokens: 170, cachedTokens: 800, cacheWriteTokens: 0, reasoningTokens: 120 },
    ],
    ['absent', undefined, undefined],
    ['without a prompt count', { candidatesTokenCount: 5 }, undefined],
    ['a negative count', { promptTokenCount: 10, candidatesTokenCount: -1 }, undefined],
    ['a fractional count', { promptTokenCount: 10.5, candidatesTokenCount: 1 }, undefined],
    ['a count as text', { promptTokenCount: '10', candidatesTokenCount: 1 }, undefined],
    ['a count beyond the ledger', { promptTokenCount: 2 ** 31, candidatesTokenCount: 1 }, undefined],
    ['more cached than prompt tokens', { promptTokenCount: 10, cachedContentTokenCount: 11, candidatesTokenCount: 1 }, undefined],
  ])('%s', (_, usageMetadata, usage) => {
    expect(geminiProvider.chat(TEST_CHANNEL, 'm').response(answer(textCandidate('STOP'), { usageMetadata })).usage).toEqual(usage);
  });
});
