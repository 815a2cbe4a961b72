// Gemini streamGenerateContent?alt=sse as internal stream events (docs/api.md 2.6).
import { StreamEventError } from '../../src/features/relay/event-stream';
import type { SseEvent } from '../../src/core/provider';
import { SseParser } from '../../src/features/upstream/sse';
import type { ChatStreamEvent } from '../../src/core/chat';
import { geminiProvider } from '../../src/providers/gemini';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const NOW_MS = 1_790_000_000_000;
const CREATED = NOW_MS / 1000;

beforeAll(() => {
  jest.useFakeTimers({ now: NOW_MS });
});
afterAll(() => {
  jest.useRealTimers();
});

/** The bytes Gemini sends, split the way it frames them ("\r\n\r\n" after each event). */
function sse(...chunks: unknown[]): SseEvent[] {
  const parser = new SseParser();
  const raw = chunks.map((chunk) => `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\r\n\r\n`).join('');
  return [...parser.push(Buffer.from(raw)), ...parser.end()];
}

function decodeAll(events: SseEvent[]): ChatStreamEvent[] {
  const decoder = geminiProvider.chat(TEST_CHANNEL, 'm').stream();
  const out = events.flatMap((event) => decoder.decode(event));
  expect(decoder.done).toBe(false);
  return out;
}

const RESPONSE_ID = 'Zx9kaP7kJtqGz7IP';

const PROMPT_USAGE = { promptTokenCount: 31, totalTokenCount: 31 };

/** One event of a Gemini stream; `usageMetadata` is left out when undefined. */
function chunk(parts: unknown[], extra: Record<string, unknown> = {}, usageMetadata?: unknown) {
  return {
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }],
    ...(usageMetadata !== undefined && { usageMetadata }),
    modelVersion: 'gemini-2.5-flash',
    responseId: RESPONSE_ID,
  };
}

describe('Gemini stream', () => {
  it('turns thoughts, a signed function call and the final usage into internal events', () => {
    const events = decodeAll(
      sse(
        chunk([{ text: '**Checking the weather**\n\nThe user asks about Paris.', thought: true }], {}, PROMPT_USAGE),
        chunk([{ text: ' I will call get_weather.', thought: true }], {}, PROMPT_USAGE),
        chunk(
          [
            { functionCall: { name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }, thoughtSignature: 'CiQBcsjafPm1' },
            { functionCall: { id: 'fc-2', name: 'get_time', args: {} } },
          ],
          { finishReason: 'STOP' },
          { promptTokenCount: 31, candidatesTokenCount: 16, thoughtsTokenCount: 57, cachedContentTokenCount: 8, totalTokenCount: 104 },
        ),
      ),
    );
    const promptOnly = { promptTokens: 31, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
    expect(events).toEqual([
      { type: 'start', id: RESPONSE_ID, created: CREATED },
      { type: 'reasoning', choice: 0, text: '**Checking the weather**\n\nThe user asks about Paris.' },
      { type: 'usage', usage: promptOnly },
      { type: 'reasoning', choice: 0, text: ' I will call get_weather.' },
      { type: 'usage', usage: promptOnly },
      { type: 'reasoning_signature', choice: 0, signature: 'CiQBcsjafPm1' },
      { type: 'tool_call', choice: 0, index: 0, id: `call_${RESPONSE_ID}_0`, name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      { type: 'tool_call', choice: 0, index: 1, id: 'fc-2', name: 'get_time', arguments: '{}' },
      { type: 'finish', choice: 0, reason: 'tool_calls' },
      { type: 'usage', usage: { promptTokens: 31, completionTokens: 73, cachedTokens: 8, cacheWriteTokens: 0, reasoningTokens: 57 } },
    ]);
  });

  it('streams text, and a closing signature-only part as a reasoning signature', () => {
    const events = decodeAll(
      sse(
        chunk([{ text: 'Hel' }]),
        chunk([{ text: 'lo.' }]),
        chunk([{ text: '', thoughtSignature: 'sig-end' }], { finishReason: 'MAX_TOKENS' }),
      ),
    );
    expect(events).toEqual([
      { type: 'start', id: RESPONSE_ID, created: CREATED },
      { type: 'text', choice: 0, text: 'Hel' },
      { type: 'text', choice: 0, text: 'lo.' },
      { type: 'reasoning_signature', choice: 0, signature: 'sig-end' },
      { type: 'finish', choice: 0, reason: 'length' },
    ]);
  });

  it('keeps candidates apart: choices, tool indexes and finish reasons', () => {
    const events = decodeAll(
      sse({
        responseId: 'r2',
        candidates: [
          { index: 0, content: { parts: [{ functionCall: { name: 'a', args: { n: 1 } } }] }, finishReason: 'STOP' },
          { index: 1, content: { parts: [{ text: 'no tools here' }] }, finishReason: 'STOP' },
          { index: 2, content: { parts: [{ functionCall: { name: 'b' } }] }, finishReason: 'STOP' },
        ],
      }),
    );
    expect(events).toEqual([
      { type: 'start', id: 'r2', created: CREATED },
      { type: 'tool_call', choice: 0, index: 0, id: 'call_r2_0', name: 'a', arguments: '{"n":1}' },
      { type: 'finish', choice: 0, reason: 'tool_calls' },
      { type: 'text', choice: 1, text: 'no tools here' },
      { type: 'finish', choice: 1, reason: 'stop' },
      { type: 'tool_call', choice: 2, index: 0, id: 'call_r2_1', name: 'b', arguments: '{}' },
      { type: 'finish', choice: 2, reason: 'tool_calls' },
    ]);
  });

  it.each<[string, unknown, ChatStreamEvent[]]>([
    ['a blocked prompt', { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, responseId: 'r3' }, [{ type: 'finish', choice: 0, reason: 'content_filter' }]],
    ['a candidate stopped by safety', { responseId: 'r3', candidates: [{ index: 0, finishReason: 'SAFETY' }] }, [{ type: 'finish', choice: 0, reason: 'content_filter' }]],
  ])('%s ends with content_filter', (_, body, tail) => {
    expect(decodeAll(sse(body))).toEqual([{ type: 'start', id: 'r3', created: CREATED }, ...tail]);
  });

  it('starts with an id of its own when Gemini sends none', () => {
    const [start] = decodeAll(sse({ candidates: [{ index: 0, content: { parts: [{ text: 'x' }] } }] }));
    expect(start).toEqual({ type: 'start', id: expect.any(String), created: CREATED });
  });

  it('reads nothing from an event without data', () => {
    expect(geminiProvider.chat(TEST_CHANNEL, 'm').stream().decode({ raw: ': keep-alive\n\n', data: null, event: null })).toEqual([]);
  });

  it.each<[string, string, string]>([
    ['an error object', JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }), 'upstream error: The model is overloaded.'],
    ['an error without a message', JSON.stringify({ error: { code: 500 } }), 'the upstream reported an error'],
    ['text that is not JSON', '{"candidates": [', 'the upstream sent a malformed event'],
    ['JSON that is not an object', '[1, 2]', 'the upstream sent a malformed event'],
    ['candidates that are not a list', '{"candidates": 3}', 'the upstream sent a malformed event'],
  ])('fails on %s', (_, data, message) => {
    const decoder = geminiProvider.chat(TEST_CHANNEL, 'm').stream();
    decoder.decode({ raw: '', data: JSON.stringify(chunk([{ text: 'partial' }])), event: null });
    const decode = () => decoder.decode({ raw: `data: ${data}\r\n\r\n`, data, event: null });
    expect(decode).toThrow(StreamEventError);
    expect(decode).toThrow(message);
  });
});
