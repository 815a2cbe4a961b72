// The OpenAI chat request <-> internal form (docs/api.md 2.6): what a chat client sends must reach
// another provider with its meaning intact, and an internal request must reach an OpenAI-compatible
// channel as a body it accepts. Fixtures are typed with the official SDK's request types.
import type { ChatCompletionCreateParams, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { parseChatCompletionRequest } from '../../src/dialects/openai/chat-request';
import type { ChatRequest } from '../../src/core/chat';
import { chatRequestFromOpenAI } from '../../src/dialects/openai/chat-to-internal';
import { chatRequestToOpenAI } from '../../src/providers/openai/chat-request';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function parsed(body: ChatCompletionCreateParams) {
  return parseChatCompletionRequest(Buffer.from(JSON.stringify(body)));
}

function internal(messages: ChatCompletionMessageParam[], extra: Partial<ChatCompletionCreateParams> = {}): ChatRequest {
  return chatRequestFromOpenAI(parsed({ model: 'gpt-4o', messages, ...extra } as ChatCompletionCreateParams));
}

function roundTrip(messages: ChatCompletionMessageParam[]): unknown {
  return chatRequestToOpenAI(internal(messages), 'upstream-model').messages;
}

const toolTurn: ChatCompletionMessageParam[] = [
  { role: 'user', content: 'Weather in Paris and Rome?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_paris', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_rome', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_paris', content: '18C, cloudy' },
  { role: 'tool', tool_call_id: 'call_rome', content: [{ type: 'text', text: '24C' }, { type: 'text', text: ', sunny' }] },
];

const imageTurn: ChatCompletionMessageParam[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Compare these' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ],
  },
];

const mediaTurn: ChatCompletionMessageParam[] = [
  {
    role: 'user',
    content: [
      { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
    ],
  },
];

const reasoningTurn: ChatCompletionMessageParam[] = [
  { role: 'user', content: '2+2?' },
  { role: 'assistant', content: '4', reasoning_content: 'Adding two and two.' } as ChatCompletionMessageParam,
  { role: 'user', content: 'and 3+3?', name: 'ann' },
];

describe('OpenAI chat messages survive a round trip through the internal form', () => {
  it.each([
    ['tool calls with their ids and the tool results', toolTurn],
    ['images inline and by URL, detail kept', imageTurn],
    ['audio and documents', mediaTurn],
    ['reasoning_content of an earlier answer and participant names', reasoningTurn],
  ])('%s', (_, messages) => {
    expect(roundTrip(messages)).toEqual(messages);
  });

  it('gathers system and developer messages, wherever they are, into one system message in order', () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hi' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
    ];
    expect(internal(messages).system).toEqual([
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Answer in French.' },
    ]);
    expect(roundTrip(messages)).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: 'hi' },
    ]);
  });
});

describe('chatRequestFromOpenAI', () => {
  it('reads content parts into internal parts', () => {
    expect(internal([...imageTurn, ...mediaTurn]).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG }, detail: 'high' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'audio', format: 'wav', data: 'UklGRg==' },
          { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, name: 'a.pdf' },
        ],
      },
    ]);
  });

  it('puts reasoning before the text and the tool calls of an assistant turn, and makes one tool turn per result', () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Checking.',
        reasoning_content: 'Need the tool.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      } as ChatCompletionMessageParam,
      { role: 'tool', tool_call_id: 'call_1', content: 'done' },
    ];
    expect(internal(messages).messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Need the tool.' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'done' }] }] },
    ]);
  });

  it('drops what no other provider can read: stored OpenAI files and custom tools', () => {
    const request = internal(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarise' },
            { type: 'file', file: { file_id: 'file-abc' } },
          ],
        },
      ],
      {
        tools: [
          { type: 'custom', custom: { name: 'grammar' } },
          { type: 'function', function: { name: 'search', parameters: { type: 'object' } } },
        ],
      },
    );
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Summarise' }] }]);
    expect(request.tools).toEqual([{ name: 'search', parameters: { type: 'object' } }]);
  });

  const user: ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  it.each<[string, Partial<ChatCompletionCreateParams>, Partial<ChatRequest>]>([
    ['max_completion_tokens wins over max_tokens', { max_tokens: 10, max_completion_tokens: 20 }, { maxTokens: 20 }],
    ['max_tokens alone', { max_tokens: 10 }, { maxTokens: 10 }],
    ['no limit', {}, { maxTokens: undefined }],
    ['sampling', { temperature: 0.3, top_p: 0.9, seed: 7, n: 2 }, { temperature: 0.3, topP: 0.9, seed: 7, n: 2 }],
    ['stop as a string', { stop: 'END' }, { stop: ['END'] }],
    ['stop as a list', { stop: ['a', 'b'] }, { stop: ['a', 'b'] }],
    ['tool choice by name', { tool_choice: { type: 'function', function: { name: 'f' } } }, { toolChoice: { name: 'f' } }],
    ['tool choice required', { tool_choice: 'required' }, { toolChoice: 'required' }],
    [
      'an allowed-tools list keeps its mode',
      { tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [] } } },
      { toolChoice: 'required' },
    ],
    ['parallel tool calls', { parallel_tool_calls: false }, { parallelToolCalls: false }],
    ['JSON object', { response_format: { type: 'json_object' } }, { responseFormat: { type: 'json_object' } }],
    [
      'JSON schema',
      { response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } } },
      { responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    ],
    ['plain text format is the default', { response_format: { type: 'text' } }, { responseFormat: undefined }],
    ['reasoning effort', { reasoning_effort: 'low' }, { reasoning: { effort: 'low' } }],
    ['reasoning effort above high', { reasoning_effort: 'xhigh' }, { reasoning: { effort: 'high' } }],
    ['no reasoning', { reasoning_effort: 'none' }, { reasoning: undefined }],
    ['stream and end user', { stream: true, user: 'u-1' }, { stream: true, user: 'u-1' }],
  ])('maps %s', (_, fields, expected) => {
    expect(internal(user, fields)).toMatchObject({ model: 'gpt-4o', stream: false, ...expected });
  });
});

describe('chatRequestToOpenAI', () => {
  const base: ChatRequest = { model: 'claude-sonnet-4-5', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false };

  it('writes the upstream model and every parameter in OpenAI terms', () => {
    const body = chatRequestToOpenAI(
      {
        ...base,
        maxTokens: 100,
        temperature: 1,
        topP: 0.5,
        stop: ['x'],
        seed: 3,
        tools: [{ name: 'f', description: 'does f', parameters: { type: 'object' }, extras: { cache_control: { type: 'ephemeral' } } }],
        toolChoice: { name: 'f' },
        parallelToolCalls: true,
        responseFormat: { type: 'json_schema', schema: { type: 'object' } },
        reasoning: { effort: 'medium', budgetTokens: 2048 },
        user: 'u',
      },
      'gpt-4.1',
    );
    expect(body).toEqual({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 100,
      temperature: 1,
      top_p: 0.5,
      stop: ['x'],
      seed: 3,
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: true,
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } },
      reasoning_effort: 'medium',
      user: 'u',
    });
  });

  it.each<[string, ChatRequest['reasoning'], string | undefined]>([
    ['a budget of 1024 or less is low', { budgetTokens: 1024 }, 'low'],
    ['a budget up to 8192 is medium', { budgetTokens: 8192 }, 'medium'],
    ['a larger budget is high', { budgetTokens: 8193 }, 'high'],
    ['a budget of 0 turns reasoning off', { budgetTokens: 0 }, 'none'],
    ["a negative budget (Gemini's dynamic) leaves the model's default", { budgetTokens: -1 }, undefined],
    ['no reasoning asked', undefined, undefined],
  ])('sends a thinking budget as an effort: %s', (_name, reasoning, effort) => {
    expect(chatRequestToOpenAI({ ...base, reasoning }, 'o4-mini').reasoning_effort).toBe(effort);
  });

  it('always asks a stream for its usage', () => {
    expect(chatRequestToOpenAI({ ...base, stream: true }, 'gpt-4o')).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chatRequestToOpenAI(base, 'gpt-4o')).not.toHaveProperty('stream');
  });

  it('sends reasoning back as reasoning_content, drops redacted reasoning, signatures and extras', () => {
    const body = chatRequestToOpenAI(
      {
        ...base,
        system: [{ type: 'text', text: 'Be brief.', extras: { cache_control: { type: 'ephemeral' } } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'go' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Think.', signature: 'sig' },
              { type: 'redacted_reasoning', data: 'opaque' },
              { type: 'text', text: 'Calling.' },
              { type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}', extras: { x: 1 } },
            ],
          },
          {
            role: 'tool',
            content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'ok' }], isError: true }],
          },
        ],
      },
      'deepseek-reasoner',
    );
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Calling.',
        reasoning_content: 'Think.',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'ok' },
    ]);
  });
});
