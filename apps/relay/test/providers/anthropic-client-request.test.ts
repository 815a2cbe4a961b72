// An Anthropic Messages request (what Claude Code and the SDK send to /v1/messages) read into the
// internal chat form, for an OpenAI-compatible or Gemini channel (docs/api.md 2.6, 2.9). Bodies go
// through the endpoint's own parser first, as they do in the relay.
import { AppError } from '@modelgate/errors';
import { parseCountTokensRequest, parseMessagesRequest } from '../../src/dialects/anthropic/request';
import { chatRequestFromAnthropic } from '../../src/dialects/anthropic/to-internal';
import { messagesRequestOf } from '../../src/providers/anthropic/request';
import type { ChatMessage, ChatRequest } from '../../src/core/chat';
import { thrownBy } from '../thrown';

const MODEL = 'claude-sonnet-4-5';
const CACHE = { cache_control: { type: 'ephemeral' } };
const HI = [{ role: 'user', content: 'hi' }];

function requestOf(fields: Record<string, unknown>): ChatRequest {
  const body = { model: MODEL, max_tokens: 1024, messages: HI, ...fields };
  return chatRequestFromAnthropic(parseMessagesRequest(Buffer.from(JSON.stringify(body))));
}

const text = (value: string) => ({ type: 'text' as const, text: value });

describe('chatRequestFromAnthropic: top-level fields', () => {
  it('reads a minimal request', () => {
    expect(requestOf({})).toEqual<ChatRequest>({
      model: MODEL,
      system: [],
      messages: [{ role: 'user', content: [text('hi')] }],
      maxTokens: 1024,
      stream: false,
    });
  });

  it.each<[string, Record<string, unknown>, Partial<ChatRequest>]>([
    ['a system string', { system: 'Be brief.' }, { system: [text('Be brief.')] }],
    [
      'system text blocks, cache_control kept as extras',
      { system: [{ type: 'text', text: 'You are Claude Code.' }, { type: 'text', text: 'Long manual', ...CACHE }] },
      { system: [text('You are Claude Code.'), { type: 'text', text: 'Long manual', extras: CACHE }] },
    ],
    ['no system for an empty string', { system: '' }, { system: [] }],
    ['temperature, top_p', { temperature: 0.3, top_p: 0.9 }, { temperature: 0.3, topP: 0.9 }],
    ['stop_sequences as stop', { stop_sequences: ['END', '###'] }, { stop: ['END', '###'] }],
    ['no stop for an empty list', { stop_sequences: [] }, {}],
    ['metadata.user_id as user', { metadata: { user_id: 'user_8f14e45f' } }, { user: 'user_8f14e45f' }],
    [
      "no user for Claude Code's long session-laden user_id (OpenAI refuses more than 64 characters)",
      { metadata: { user_id: `user_${'a'.repeat(64)}_account_${'b'.repeat(36)}_session_${'c'.repeat(36)}` } },
      {},
    ],
    ['stream: true', { stream: true }, { stream: true }],
    ['nothing of top_k and fields without equivalent', { top_k: 5, service_tier: 'auto', container: 'c1', ...CACHE }, {}],
    ['thinking enabled as a budget', { thinking: { type: 'enabled', budget_tokens: 2048 } }, { reasoning: { budgetTokens: 2048 } }],
    ['no reasoning for thinking disabled', { thinking: { type: 'disabled' } }, {}],
    ['no reasoning for adaptive thinking alone (the provider decides)', { thinking: { type: 'adaptive' } }, {}],
    [
      "adaptive thinking with output_config.effort as the effort (max is others' high)",
      { thinking: { type: 'adaptive' }, output_config: { effort: 'max' } },
      { reasoning: { effort: 'high' } },
    ],
    ['no effort when thinking is disabled', { thinking: { type: 'disabled' }, output_config: { effort: 'low' } }, {}],
    [
      'output_config.format as a JSON schema response format',
      { output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'integer' } } } } } },
      { responseFormat: { type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'integer' } } } } },
    ],
  ])('reads %s', (_name, fields, expected) => {
    expect(requestOf(fields)).toEqual({
      model: MODEL,
      system: [],
      messages: [{ role: 'user', content: [text('hi')] }],
      maxTokens: 1024,
      stream: false,
      ...expected,
    });
  });

  it('reads a count_tokens body: no max_tokens, never a stream', () => {
    const body = parseCountTokensRequest(Buffer.from(JSON.stringify({ model: MODEL, messages: HI, system: 'S' })));
    expect(chatRequestFromAnthropic(body)).toEqual<ChatRequest>({
      model: MODEL,
      system: [text('S')],
      messages: [{ role: 'user', content: [text('hi')] }],
      stream: false,
    });
  });
});

describe('chatRequestFromAnthropic: tools', () => {
  const weather = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };
  const webSearch = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 };
  const bash = { type: 'bash_20250124', name: 'bash' };
  const weatherTool = { name: 'get_weather', description: 'Weather of a city', parameters: weather.input_schema };

  it.each<[string, Record<string, unknown>, Partial<ChatRequest>]>([
    ['a custom tool: input_schema as parameters', { tools: [weather] }, { tools: [weatherTool] }],
    [
      "a custom tool typed 'custom', with cache_control as extras, and one without schema",
      { tools: [{ ...weather, type: 'custom', ...CACHE }, { name: 'noop' }] },
      { tools: [{ ...weatherTool, extras: CACHE }, { name: 'noop' }] },
    ],
    ['no server tools (web search, bash): they run at Anthropic only', { tools: [webSearch, weather, bash] }, { tools: [weatherTool] }],
    ['no tools when only server tools were sent, nor their choice', { tools: [webSearch], tool_choice: { type: 'any' } }, {}],
    ['tool_choice auto', { tools: [weather], tool_choice: { type: 'auto' } }, { tools: [weatherTool], toolChoice: 'auto' }],
    ['tool_choice any as required', { tools: [weather], tool_choice: { type: 'any' } }, { tools: [weatherTool], toolChoice: 'required' }],
    ['tool_choice none', { tools: [weather], tool_choice: { type: 'none' } }, { tools: [weatherTool], toolChoice: 'none' }],
    [
      'tool_choice tool as the named tool',
      { tools: [weather], tool_choice: { type: 'tool', name: 'get_weather' } },
      { tools: [weatherTool], toolChoice: { name: 'get_weather' } },
    ],
    ['no choice forcing a dropped server tool', { tools: [weather, webSearch], tool_choice: { type: 'tool', name: 'web_search' } }, { tools: [weatherTool] }],
    [
      'disable_parallel_tool_use as parallelToolCalls false',
      { tools: [weather], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
      { tools: [weatherTool], toolChoice: 'auto', parallelToolCalls: false },
    ],
    [
      'parallelToolCalls false even when the forced tool was dropped',
      { tools: [weather, webSearch], tool_choice: { type: 'tool', name: 'web_search', disable_parallel_tool_use: true } },
      { tools: [weatherTool], parallelToolCalls: false },
    ],
  ])('reads %s', (_name, fields, expected) => {
    const { tools, toolChoice, parallelToolCalls } = requestOf(fields);
    expect({ tools, toolChoice, parallelToolCalls }).toEqual({ tools: undefined, toolChoice: undefined, parallelToolCalls: undefined, ...expected });
  });
});

describe('chatRequestFromAnthropic: content blocks', () => {
  const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };

  it.each<[string, unknown[], ChatMessage[]]>([
    [
      'text and images (base64, URL), cache_control kept',
      [
        { role: 'user', content: [{ type: 'image', source: png }, { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' }, ...CACHE }, { type: 'text', text: 'Compare.', ...CACHE }] },
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' }, extras: CACHE },
            { type: 'text', text: 'Compare.', extras: CACHE },
          ],
        },
      ],
    ],
    [
      'documents: a base64 PDF with its title, a PDF URL, plain text as base64 text/plain, a content source as its blocks',
      [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf', context: 'Q3', citations: { enabled: true } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/paper.pdf' }, ...CACHE },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'caf\u00e9 notes' } },
            { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Chunk 1' }, { type: 'image', source: png }] } },
            { type: 'document', source: { type: 'content', content: 'Chunk 2' } },
          ],
        },
      ],
      [
        {
          role: 'user',
          content: [
            { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0x' }, name: 'report.pdf' },
            { type: 'file', source: { kind: 'url', url: 'https://example.com/paper.pdf' }, extras: CACHE },
            { type: 'file', source: { kind: 'base64', mediaType: 'text/plain', data: Buffer.from('caf\u00e9 notes').toString('base64') } },
            text('Chunk 1'),
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            text('Chunk 2'),
          ],
        },
      ],
    ],
    [
      'a search result as text: title, source, then its texts',
      [{ role: 'user', content: [{ type: 'search_result', title: 'Docs', source: 'https://docs.example.com', content: [text('Part A'), text('Part B')] }] }],
      [{ role: 'user', content: [text('Docs\n\nhttps://docs.example.com\n\nPart A\n\nPart B')] }],
    ],
    [
      'an assistant turn: signed thinking, redacted thinking, text, a tool call with its input as JSON text',
      [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Need the tool.', signature: 'EqQBCkYIBxgCKkD' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3p' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' }, ...CACHE },
          ],
        },
      ],
      [
        { role: 'user', content: [text('Weather in Paris?')] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Need the tool.', signature: 'EqQBCkYIBxgCKkD' },
            { type: 'redacted_reasoning', data: 'EmwKAhgBEgy3va3p' },
            text('Checking.'),
            { type: 'tool_call', id: 'toolu_01A', name: 'get_weather', arguments: '{"city":"Paris"}', extras: CACHE },
          ],
        },
      ],
    ],
    [
      "thinking with an empty signature (another provider's, as the relay writes it) as reasoning without one",
      [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: '' }, text('Yes.')] }],
      [{ role: 'assistant', content: [{ type: 'reasoning', text: 'Hmm.' }, text('Yes.')] }],
    ],
    [
      'tool results as tool turns in order, the words after them a user turn',
      [
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01A', content: '18C' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01B',
              is_error: true,
              content: [text('Here:'), { type: 'image', source: png }, { type: 'tool_reference', tool_name: 'x' }],
              ...CACHE,
            },
            { type: 'tool_result', tool_use_id: 'toolu_01C' },
            text('Thanks'),
            { type: 'tool_result', tool_use_id: 'toolu_01D', content: [] },
          ],
        },
      ],
      [
        {
          role: 'tool',
          content: [
            { type: 'tool_result', toolCallId: 'toolu_01A', content: [text('18C')] },
            {
              type: 'tool_result',
              toolCallId: 'toolu_01B',
              content: [text('Here:'), { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } }],
              isError: true,
              extras: CACHE,
            },
            { type: 'tool_result', toolCallId: 'toolu_01C', content: [] },
          ],
        },
        { role: 'user', content: [text('Thanks')] },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_01D', content: [] }] },
      ],
    ],
    [
      'no server-tool blocks of the history nor unknown blocks; a turn left empty is none',
      [
        { role: 'user', content: 'Search the news.' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'news' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://a.example', encrypted_content: 'x' }] },
            { type: 'text', text: 'Here is the news.', citations: [{ type: 'web_search_result_location', url: 'https://a.example' }] },
          ],
        },
        { role: 'user', content: [{ type: 'container_upload', file_id: 'file_1' }] },
        { role: 'user', content: 'More?' },
      ],
      [
        { role: 'user', content: [text('Search the news.')] },
        { role: 'assistant', content: [text('Here is the news.')] },
        { role: 'user', content: [text('More?')] },
      ],
    ],
  ])('reads %s', (_name, messages, expected) => {
    expect(requestOf({ messages }).messages).toEqual(expected);
  });

  it('gives back the same blocks when sent on to Anthropic (both directions agree)', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'Weather?', ...CACHE }, { type: 'image', source: png }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Tool.', signature: 'sig' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C', is_error: true },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' }, title: 'n.txt' },
        ],
      },
    ];
    const system = [{ type: 'text', text: 'Manual', ...CACHE }];
    const sent = messagesRequestOf('claude-sonnet-4-5-20250929', requestOf({ system, messages }));
    expect(sent.system).toEqual(system);
    expect(sent.messages).toEqual(messages);
  });

  it.each<[string, unknown[], string]>([
    ['a text block without text', [{ role: 'user', content: [{ type: 'text' }] }], 'messages.0.content.0.text'],
    ['an image without a source', [{ role: 'user', content: [text('a'), { type: 'image' }] }], 'messages.0.content.1.source'],
    ['base64 without data', [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }], 'messages.0.content.0.source.data'],
    ['an unknown source type', [{ role: 'user', content: [{ type: 'image', source: { type: 'ftp', url: 'x' } }] }], 'messages.0.content.0.source.type'],
    [
      'a file_id source (only Anthropic can read it)',
      [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_011' } }] }],
      'messages.0.content.0.source',
    ],
    [
      'a content source with a tool_use block',
      [{ role: 'user', content: [{ type: 'document', source: { type: 'content', content: [{ type: 'tool_use' }] } }] }],
      'messages.0.content.0.source.content.0.type',
    ],
    [
      'a tool_use whose input is not an object',
      [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: '{}' }] }],
      'messages.1.content.0.input',
    ],
    ['a tool_use without an id', [{ role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }], 'messages.0.content.0.id'],
    ['a tool_result without tool_use_id', [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }], 'messages.0.content.0.tool_use_id'],
    [
      'a tool_result whose content block is not an object',
      [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: ['x'] }] }],
      'messages.0.content.0.content.0',
    ],
    [
      'a tool_result text block without text',
      [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 5 }] }] }],
      'messages.0.content.0.content.0.text',
    ],
    ['thinking without its text', [{ role: 'assistant', content: [{ type: 'thinking', signature: 's' }] }], 'messages.0.content.0.thinking'],
    ['redacted thinking without data', [{ role: 'assistant', content: [{ type: 'redacted_thinking' }] }], 'messages.0.content.0.data'],
    ['a search result without title', [{ role: 'user', content: [{ type: 'search_result', source: 's', content: [] }] }], 'messages.0.content.0.title'],
  ])('answers 400 naming the field for %s', (_name, messages, param) => {
    const error = thrownBy(() => requestOf({ messages }));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, param });
    expect((error as AppError).message).toMatch(new RegExp(`^${param.replace(/\./g, '\\.')}: `));
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a system block that is not text', { system: [{ type: 'image', source: png }] }, 'system.0.type'],
    ['a system text block without text', { system: [{ type: 'text' }] }, 'system.0.text'],
    ['an output format that is not a JSON schema', { output_config: { format: { type: 'regex' } } }, 'output_config.format'],
    ['an output_config that is not an object', { output_config: 'json' }, 'output_config'],
  ])('answers 400 naming the field for %s', (_name, fields, param) => {
    expect(thrownBy(() => requestOf(fields))).toMatchObject({ code: 'invalid_request', status: 400, param });
  });
});
