import { AppError } from '@modelgate/errors';
import { anthropicProvider } from '../../src/providers/anthropic';
import type { ChatMessage, ChatRequest } from '../../src/core/chat';
import { thrownBy } from '../thrown';

const channel = { id: 1, key: 'sk-ant-api03-test', origin: 'http://upstream.test', pathPrefix: '/proxy', settings: {} };

function chat(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'claude', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, ...overrides };
}

/** The JSON body the provider would send upstream for `request`. */
function bodyOf(request: ChatRequest): Record<string, unknown> {
  const call = anthropicProvider.chat(channel, 'claude-sonnet-4-5-20250929').request(request);
  return JSON.parse(call.body.toString()) as Record<string, unknown>;
}

const userText = (text: string): ChatMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const CACHE = { cache_control: { type: 'ephemeral' } };

describe('Anthropic chat request', () => {
  it('posts to the channel path prefix with the key, the API version and JSON', () => {
    const call = anthropicProvider.chat(channel, 'claude-sonnet-4-5-20250929').request(chat());
    expect(call.path).toBe('/proxy/v1/messages');
    expect(call.headers).toEqual({ 'x-api-key': 'sk-ant-api03-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' });
    expect(JSON.parse(call.body.toString())).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(anthropicProvider.facts.type).toBe(14);
    expect(anthropicProvider.embeddings).toBeUndefined();
  });

  it.each<[string, Partial<ChatRequest>, Record<string, unknown>]>([
    ['max_tokens as the client set it', { maxTokens: 300 }, { max_tokens: 300 }],
    ['one system text as a string', { system: [{ type: 'text', text: 'Be brief.' }] }, { system: 'Be brief.' }],
    [
      'a system text with cache_control as blocks',
      { system: [{ type: 'text', text: 'Long manual', extras: CACHE }] },
      { system: [{ type: 'text', text: 'Long manual', ...CACHE }] },
    ],
    [
      'several system texts as blocks, in order',
      { system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] },
      { system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] },
    ],
    ['temperature clamped to 1', { temperature: 1.7 }, { temperature: 1 }],
    ['temperature alone when top_p is set too (current models refuse both)', { temperature: 0.2, topP: 0.9 }, { temperature: 0.2 }],
    ['top_p alone', { topP: 0.9 }, { top_p: 0.9 }],
    ['stop as stop_sequences', { stop: ['END', '###'] }, { stop_sequences: ['END', '###'] }],
    ['user as metadata.user_id', { user: 'user-8f14e45f' }, { metadata: { user_id: 'user-8f14e45f' } }],
    ['no email address as user id (Anthropic refuses one)', { user: 'ada@example.com' }, {}],
    ['stream: true', { stream: true }, { stream: true }],
    ['no response format nor seed (no equivalent)', { responseFormat: { type: 'json_object' }, seed: 7, n: 1 }, {}],
  ])('sends %s', (_name, overrides, expected) => {
    expect(bodyOf(chat(overrides))).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      ...expected,
    });
  });

  it.each<[string, ChatMessage[], unknown[]]>([
    [
      'merges consecutive turns of one role, as Anthropic requires alternation',
      [userText('one'), userText('two'), { role: 'assistant', content: [{ type: 'text', text: 'three' }] }],
      [
        { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'three' }] },
      ],
    ],
    [
      'keeps tool call ids through a round trip, results first in the next user turn',
      [
        userText('Weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '18C' }] }] },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_2', content: [{ type: 'text', text: 'down' }], isError: true }] },
        userText('Thanks'),
      ],
      [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
            { type: 'tool_result', tool_use_id: 'call_2', content: 'down', is_error: true },
            { type: 'text', text: 'Thanks' },
          ],
        },
      ],
    ],
    [
      'sends a tool result with an image as blocks, an empty one without content, and no arguments as {}',
      [
        { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_01', name: 'screenshot', arguments: '' }] },
        {
          role: 'tool',
          content: [
            {
              type: 'tool_result',
              toolCallId: 'toolu_01',
              content: [
                { type: 'text', text: 'Here:' },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
              ],
            },
          ],
        },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_02', content: [] }] },
      ],
      [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'screenshot', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: [
                { type: 'text', text: 'Here:' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              ],
            },
            { type: 'tool_result', tool_use_id: 'toolu_02' },
          ],
        },
      ],
    ],
    [
      'sends data: URL and inline images as base64 and http URLs by URL',
      [
        {
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'url', url: 'data:image/jpeg;base64,/9j/4AAQ' }, detail: 'high' },
            { type: 'image', source: { kind: 'url', url: 'https://upload.wikimedia.org/cat.jpg' } },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/webp', data: 'UklGRg==' }, extras: CACHE },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
            { type: 'image', source: { type: 'url', url: 'https://upload.wikimedia.org/cat.jpg' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGRg==' }, ...CACHE },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
    ],
    [
      'sends files as documents: PDFs as base64, plain text as text, URLs by URL',
      [
        {
          role: 'user',
          content: [
            { type: 'file', source: { kind: 'url', url: 'data:application/pdf;base64,JVBERi0x' }, name: 'report.pdf' },
            { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('caf\u00e9 notes').toString('base64') } },
            { type: 'file', source: { kind: 'url', url: 'https://example.com/paper.pdf' } },
          ],
        },
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'caf\u00e9 notes' } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' } },
          ],
        },
      ],
    ],
    [
      'keeps signed thinking and redacted thinking, drops unsigned reasoning from other providers',
      [
        userText('Think.'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Let me think', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
            { type: 'redacted_reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
            { type: 'reasoning', text: 'a DeepSeek thought' },
            { type: 'text', text: 'Done.' },
          ],
        },
        userText('Again.'),
      ],
      [
        { role: 'user', content: [{ type: 'text', text: 'Think.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me think', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
            { type: 'text', text: 'Done.' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'Again.' }] },
      ],
    ],
  ])('%s', (_name, messages, expected) => {
    expect(bodyOf(chat({ messages })).messages).toEqual(expected);
  });

  const weather = { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
  const weatherTool = { name: 'get_weather', description: 'Current weather', input_schema: weather.parameters };

  it.each<[string, Partial<ChatRequest>, Record<string, unknown>]>([
    ['tools without a choice', { tools: [weather] }, { tools: [weatherTool] }],
    ['auto', { tools: [weather], toolChoice: 'auto' }, { tools: [weatherTool], tool_choice: { type: 'auto' } }],
    ['required as any', { tools: [weather], toolChoice: 'required' }, { tools: [weatherTool], tool_choice: { type: 'any' } }],
    ['none', { tools: [weather], toolChoice: 'none' }, { tools: [weatherTool], tool_choice: { type: 'none' } }],
    ['a named tool', { tools: [weather], toolChoice: { name: 'get_weather' } }, { tools: [weatherTool], tool_choice: { type: 'tool', name: 'get_weather' } }],
    [
      'no parallel tool calls alone as auto',
      { tools: [weather], parallelToolCalls: false },
      { tools: [weatherTool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
    ],
    [
      'no parallel tool calls with required',
      { tools: [weather], toolChoice: 'required', parallelToolCalls: false },
      { tools: [weatherTool], tool_choice: { type: 'any', disable_parallel_tool_use: true } },
    ],
    ['no tool choice without tools', { tools: [], toolChoice: 'required', parallelToolCalls: false }, {}],
    [
      'a tool without parameters with an empty object schema, and its cache_control',
      { tools: [{ name: 'ping', extras: CACHE }] },
      { tools: [{ name: 'ping', input_schema: { type: 'object', properties: {} }, ...CACHE }] },
    ],
  ])('tool choice: %s', (_name, overrides, expected) => {
    const body = bodyOf(chat(overrides));
    expect({ tools: body.tools, tool_choice: body.tool_choice }).toEqual({ tools: undefined, tool_choice: undefined, ...expected });
  });

  it.each<[string, Partial<ChatRequest>, Record<string, unknown>]>([
    ['a budget under max_tokens', { reasoning: { budgetTokens: 2000 } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2000 } }],
    ['a budget raised to the minimum 1024', { reasoning: { budgetTokens: 100 } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } }],
    [
      'max_tokens raised above the budget, the requested output on top',
      { reasoning: { budgetTokens: 8000 }, maxTokens: 1000 },
      { max_tokens: 9000, thinking: { type: 'enabled', budget_tokens: 8000 } },
    ],
    ['effort low', { reasoning: { effort: 'low' } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } }],
    ['effort minimal', { reasoning: { effort: 'minimal' } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } }],
    ['effort medium', { reasoning: { effort: 'medium' } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }],
    ['effort high, the default output on top', { reasoning: { effort: 'high' } }, { max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 4096 } }],
    [
      'effort high within a larger max_tokens',
      { reasoning: { effort: 'high' }, maxTokens: 10000 },
      { max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: 4096 } },
    ],
    ['a dynamic (negative) budget as medium', { reasoning: { budgetTokens: -1 } }, { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }],
    ['no thinking for a zero budget, sampling kept', { reasoning: { budgetTokens: 0, effort: 'high' }, temperature: 0.5 }, { max_tokens: 4096, temperature: 0.5 }],
    [
      'thinking without temperature nor top_p (Anthropic refuses them with it)',
      { reasoning: { effort: 'low' }, temperature: 0.5, topP: 0.9 },
      { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 1024 } },
    ],
  ])('thinking: %s', (_name, overrides, expected) => {
    const body = bodyOf(chat(overrides));
    expect({ max_tokens: body.max_tokens, thinking: body.thinking, temperature: body.temperature, top_p: body.top_p }).toEqual({
      thinking: undefined,
      temperature: undefined,
      top_p: undefined,
      ...expected,
    });
  });

  describe('thinking while answering tool calls', () => {
    const toolResult: ChatMessage = { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18C' }] }] };
    const call = { type: 'tool_call' as const, id: 'toolu_1', name: 'get_weather', arguments: '{}' };

    it('stays on when the assistant turn kept its signed thinking', () => {
      const messages: ChatMessage[] = [
        userText('Weather?'),
        { role: 'assistant', content: [{ type: 'reasoning', text: 'Use the tool', signature: 'sig' }, call] },
        toolResult,
      ];
      expect(bodyOf(chat({ messages, reasoning: { effort: 'low' } })).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    });

    it('is left off when the client could not send the thinking back (Anthropic would answer 400)', () => {
      const messages: ChatMessage[] = [userText('Weather?'), { role: 'assistant', content: [call] }, toolResult];
      const body = bodyOf(chat({ messages, reasoning: { effort: 'low' }, temperature: 0.3 }));
      expect(body.thinking).toBeUndefined();
      expect(body.temperature).toBe(0.3);
    });
  });

  it.each<[string, Partial<ChatRequest>, string]>([
    ['n above 1', { n: 2 }, 'n'],
    ['audio input (dropping it would change the question)', { messages: [{ role: 'user', content: [{ type: 'audio', format: 'wav', data: 'UklGRg==' }] }] }, 'messages'],
    [
      'tool call arguments that are not JSON',
      { messages: [{ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{"city":' }] }] },
      'messages',
    ],
    [
      'tool call arguments that are not an object',
      { messages: [{ role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '[1,2]' }] }] },
      'messages',
    ],
    [
      'an image URL that is neither http(s) nor base64 data',
      { messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'ftp://example.com/cat.png' } }] }] },
      'messages',
    ],
  ])('answers 400 for %s', (_name, overrides, param) => {
    const thrown = thrownBy(() => bodyOf(chat(overrides)));
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_request', param });
  });
});
