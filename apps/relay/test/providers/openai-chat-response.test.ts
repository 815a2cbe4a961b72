// A chat answer both ways (docs/api.md 2.6, 2.7): an OpenAI-compatible channel's answer read into
// the internal form, and any provider's answer written as OpenAI's `chat.completion` with the
// full usage object of docs/api.md 2.1. Fixtures are typed with the official SDK's types.
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { UpstreamFailure } from '../../src/features/upstream/client';
import type { ChatResponse, ChatUsage, FinishReason } from '../../src/core/chat';
import { chatResponseToOpenAI } from '../../src/dialects/openai/chat-from-internal';
import { chatResponseFromOpenAI } from '../../src/providers/openai/chat-response';
import { chargedUsageOf, completeUsage, usageFromOpenAI, usageToOpenAI } from '../../src/providers/openai/usage';
import { thrownBy } from '../thrown';

type Choice = ChatCompletion.Choice;

function completion(choices: Choice[], usage?: ChatCompletion['usage']): ChatCompletion {
  return { id: 'chatcmpl-42', object: 'chat.completion', created: 1_760_000_000, model: 'gpt-4o-2024-08-06', choices, usage };
}

function answer(content: string | null, finish: Choice['finish_reason'], extra: Partial<Choice['message']> = {}): Choice {
  return { index: 0, message: { role: 'assistant', content, refusal: null, ...extra }, logprobs: null, finish_reason: finish };
}

const USAGE: ChatCompletion['usage'] = {
  prompt_tokens: 1200,
  completion_tokens: 300,
  total_tokens: 1500,
  prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 128, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

describe('chatResponseFromOpenAI', () => {
  it.each<[Choice['finish_reason'], FinishReason]>([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
  ])('maps finish reason %s to %s', (finish, expected) => {
    expect(chatResponseFromOpenAI(completion([answer('x', finish)])).choices[0]?.finishReason).toBe(expected);
  });

  it('reads reasoning, text, tool calls and usage', () => {
    const reasoning = { reasoning_content: 'Look it up.' } as Partial<Choice['message']>;
    const body = completion(
      [
        answer('Let me check.', 'tool_calls', {
          ...reasoning,
          tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
        }),
      ],
      USAGE,
    );
    expect(chatResponseFromOpenAI(body)).toEqual<ChatResponse>({
      id: 'chatcmpl-42',
      created: 1_760_000_000,
      choices: [
        {
          index: 0,
          finishReason: 'tool_calls',
          content: [
            { type: 'reasoning', text: 'Look it up.' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_call', id: 'call_9', name: 'lookup', arguments: '{"q":"x"}' },
          ],
        },
      ],
      usage: { promptTokens: 1200, completionTokens: 300, cachedTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 128 },
    });
  });

  it('keeps every choice of n > 1 and shows a refusal as text', () => {
    const body = completion([answer('A', 'stop'), { ...answer(null, 'stop', { refusal: 'I cannot help.' }), index: 1 }]);
    expect(chatResponseFromOpenAI(body).choices.map((choice) => choice.content)).toEqual([
      [{ type: 'text', text: 'A' }],
      [{ type: 'text', text: 'I cannot help.' }],
    ]);
  });

  it('leaves usage undefined when the upstream reported none (the relay counts then)', () => {
    expect(chatResponseFromOpenAI(completion([answer('x', 'stop')])).usage).toBeUndefined();
  });

  it.each<[string, unknown]>([
    ['not an object', 'oops'],
    ['no choices', { id: 'x' }],
    ['a choice without a message', { choices: [{ index: 0 }] }],
    ['content that is not text', { choices: [{ index: 0, message: { content: 5 } }] }],
    ['tool calls that are not a list', { choices: [{ index: 0, message: { content: null, tool_calls: {} } }] }],
    ['a tool call without a name', { choices: [{ index: 0, message: { tool_calls: [{ id: 'c', function: { arguments: '{}' } }] } }] }],
  ])('refuses %s as a failed upstream call', (_, body) => {
    const thrown = thrownBy(() => chatResponseFromOpenAI(body));
    expect(thrown).toBeInstanceOf(UpstreamFailure);
    expect(thrown).toMatchObject({ kind: 'other' });
  });
});

describe('usage', () => {
  it.each<[string, unknown, ChatUsage | undefined]>([
    ['OpenAI', USAGE, { promptTokens: 1200, completionTokens: 300, cachedTokens: 1024, cacheWriteTokens: 0, reasoningTokens: 128 }],
    [
      'DeepSeek cache hits',
      { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 },
      { promptTokens: 100, completionTokens: 5, cachedTokens: 64, cacheWriteTokens: 0, reasoningTokens: 0 },
    ],
    [
      'details above their totals cut to them',
      { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 50 }, completion_tokens_details: { reasoning_tokens: 9 } },
      { promptTokens: 10, completionTokens: 5, cachedTokens: 10, cacheWriteTokens: 0, reasoningTokens: 5 },
    ],
    ['absent', undefined, undefined],
    ['no completion count', { prompt_tokens: 10 }, undefined],
    ['a negative count', { prompt_tokens: -1, completion_tokens: 5 }, undefined],
    ['a fractional count', { prompt_tokens: 1.5, completion_tokens: 5 }, undefined],
  ])('reads %s', (_, upstream, expected) => {
    expect(usageFromOpenAI(upstream)).toEqual(expected);
    // A passed-through answer is charged by the same rules.
    if (expected) expect(chargedUsageOf(completeUsage(upstream, () => 0, () => 0))).toEqual(expected);
  });

  it('shows a passed-through client DeepSeek cache hits as cached_tokens', () => {
    const usage = completeUsage({ prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64 }, () => 0, () => 0);
    expect(usage.prompt_tokens_details.cached_tokens).toBe(64);
  });

  it('writes the full usage object: prompt includes cached and cache-write tokens, details derived', () => {
    expect(usageToOpenAI({ promptTokens: 2000, completionTokens: 500, cachedTokens: 1500, cacheWriteTokens: 300, reasoningTokens: 200 })).toEqual({
      prompt_tokens: 2000,
      completion_tokens: 500,
      total_tokens: 2500,
      prompt_tokens_details: { cached_tokens: 1500, text_tokens: 2000, audio_tokens: 0, image_tokens: 0 },
      completion_tokens_details: { text_tokens: 300, audio_tokens: 0, reasoning_tokens: 200 },
    });
  });
});

describe('chatResponseToOpenAI', () => {
  const usage: ChatUsage = { promptTokens: 20, completionTokens: 10, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 4 };
  const openaiUsage = usageToOpenAI(usage);

  it('writes a chat.completion the OpenAI SDK types describe', () => {
    const response: ChatResponse = {
      id: 'msg_01ABC',
      created: 1_760_000_000,
      choices: [{ index: 0, content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: ' there' }], finishReason: 'stop' }],
    };
    const expected: ChatCompletion = {
      id: 'chatcmpl-msg_01ABC',
      object: 'chat.completion',
      created: 1_760_000_000,
      model: 'claude-sonnet-4-5',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: openaiUsage,
    };
    expect(chatResponseToOpenAI(response, 'claude-sonnet-4-5', usage)).toEqual(expected);
  });

  it.each<[string, ChatResponse['choices'][number], Record<string, unknown>]>([
    [
      'only tool calls: content null',
      { index: 0, finishReason: 'tool_calls', content: [{ type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{}' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        refusal: null,
      },
    ],
    [
      'reasoning as reasoning_content, signatures and redacted reasoning dropped',
      {
        index: 0,
        finishReason: 'stop',
        content: [
          { type: 'reasoning', text: 'Hmm. ', signature: 's' },
          { type: 'redacted_reasoning', data: 'x' },
          { type: 'reasoning', text: 'Yes.' },
          { type: 'text', text: 'Yes' },
        ],
      },
      { role: 'assistant', content: 'Yes', reasoning_content: 'Hmm. Yes.', refusal: null },
    ],
    ['an empty answer: empty content', { index: 0, finishReason: 'length', content: [] }, { role: 'assistant', content: '', refusal: null }],
  ])('%s', (_, choice, message) => {
    const written = chatResponseToOpenAI({ id: 'chatcmpl-1', created: 1, choices: [choice] }, 'm', usage);
    expect(written.choices).toEqual([{ index: 0, message, logprobs: null, finish_reason: choice.finishReason }]);
    expect(written.id).toBe('chatcmpl-1');
  });

  it('an OpenAI answer read and written back keeps its meaning', () => {
    const body = completion(
      [
        answer(null, 'tool_calls', { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }),
        { ...answer('Hi', 'length'), index: 1 },
      ],
      USAGE,
    );
    const read = chatResponseFromOpenAI(body);
    const written = chatResponseToOpenAI(read, 'gpt-4o', read.usage ?? usage);
    expect(written).toEqual({ ...body, model: 'gpt-4o', usage: usageToOpenAI(read.usage ?? usage) });
  });
});
