// A Responses request read into the internal form (docs/api.md 2.10), for a channel that does not
// speak Responses: every input item and content part a client (Codex, the openai SDK) sends, the
// merging of assistant items into one turn, the request's parameters, and the 400s for what cannot
// be served statelessly. Fixtures are typed with the official SDK's request types.
import { AppError } from '@modelgate/errors';
import type { ResponseCreateParams, ResponseInputItem } from 'openai/resources/responses/responses';
import { parseResponsesRequest } from '../../src/dialects/responses/request';
import type { ChatMessage, ChatRequest, ContentPart } from '../../src/core/chat';
import { geminiProvider } from '../../src/providers/gemini';
import { chatRequestFromResponses, inResponsesTerms } from '../../src/dialects/responses/to-internal';
import { thrownBy } from '../thrown';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Input items the SDK types, or items it does not know (the 400 cases). */
type Item = ResponseInputItem | Record<string, unknown>;
type Body = Omit<Partial<ResponseCreateParams>, 'input' | 'tools' | 'tool_choice'> & {
  input?: string | Item[];
  tools?: Record<string, unknown>[];
  tool_choice?: string | Record<string, unknown>;
} & Record<string, unknown>;

function internal(body: Body): ChatRequest {
  return chatRequestFromResponses(parseResponsesRequest(Buffer.from(JSON.stringify({ model: 'claude-sonnet-4-5', ...body }))));
}

function messagesOf(input: Item[]): ChatMessage[] {
  return internal({ input }).messages;
}

function text(value: string): ContentPart {
  return { type: 'text', text: value };
}

const hi: ResponseInputItem = { role: 'user', content: 'hi' };

describe('chatRequestFromResponses: input', () => {
  it('reads a string input as one user message, and instructions as the system text', () => {
    expect(internal({ instructions: 'Be terse.', input: 'Hello' })).toEqual<ChatRequest>({
      model: 'claude-sonnet-4-5',
      system: [text('Be terse.')],
      messages: [{ role: 'user', content: [text('Hello')] }],
      stream: false,
    });
  });

  it('reads every content part kind of a user message', () => {
    const messages = messagesOf([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Compare these' },
          { type: 'input_image', detail: 'high', image_url: `data:image/png;base64,${PNG}` },
          { type: 'input_image', detail: 'auto', image_url: 'https://example.com/cat.jpg' },
          { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
          { type: 'input_file', file_url: 'https://example.com/b.pdf' },
        ],
      },
    ]);
    expect(messages).toEqual<ChatMessage[]>([
      {
        role: 'user',
        content: [
          text('Compare these'),
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG }, detail: 'high' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' }, detail: 'auto' },
          { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' }, name: 'a.pdf' },
          { type: 'file', source: { kind: 'url', url: 'https://example.com/b.pdf' } },
        ],
      },
    ]);
  });

  it('gathers instructions, system and developer messages, wherever they are, into the system text in order', () => {
    const request = internal({
      instructions: 'You are Codex.',
      input: [
        { role: 'developer', content: 'Sandbox: read-only.' },
        hi,
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Answer in French.' }] },
      ],
    });
    expect(request.system).toEqual([text('You are Codex.'), text('Sandbox: read-only.'), text('Answer in French.')]);
    expect(request.messages).toEqual([{ role: 'user', content: [text('hi')] }]);
  });

  it('merges consecutive assistant items (reasoning, messages, function calls) into one turn, and consecutive outputs into one tool turn', () => {
    const messages = messagesOf([
      hi,
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two cities.' }] },
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }],
      },
      { type: 'function_call', id: 'fc_1', call_id: 'call_paris', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', call_id: 'call_rome', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_paris', output: '18C' },
      {
        type: 'function_call_output',
        call_id: 'call_rome',
        output: [
          { type: 'input_text', text: '24C, see map' },
          { type: 'input_image', image_url: 'https://example.com/map.png' },
        ],
      },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot say more.' }] },
      { role: 'user', content: 'thanks' },
    ]);
    expect(messages).toEqual<ChatMessage[]>([
      { role: 'user', content: [text('hi')] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two cities.' },
          text('Checking both.'),
          { type: 'tool_call', id: 'call_paris', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_rome', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool_result', toolCallId: 'call_paris', content: [text('18C')] },
          {
            type: 'tool_result',
            toolCallId: 'call_rome',
            content: [text('24C, see map'), { type: 'image', source: { kind: 'url', url: 'https://example.com/map.png' } }],
          },
        ],
      },
      { role: 'assistant', content: [text('I cannot say more.')] },
      { role: 'user', content: [text('thanks')] },
    ]);
  });

  it.each<[string, Record<string, unknown>, ContentPart[]]>([
    ['summaries joined', { summary: [{ type: 'summary_text', text: 'First.' }, { type: 'summary_text', text: 'Second.' }] }, [
      { type: 'reasoning', text: 'First.\n\nSecond.' },
    ]],
    [
      'the full reasoning text rather than its summary',
      { summary: [{ type: 'summary_text', text: 'Short.' }], content: [{ type: 'reasoning_text', text: 'Long and full.' }] },
      [{ type: 'reasoning', text: 'Long and full.' }],
    ],
    [
      'a signature carried in encrypted_content',
      { summary: [{ type: 'summary_text', text: 'Thinking.' }], encrypted_content: 'modelgate.signature:EqQBCkgIAR' },
      [{ type: 'reasoning', text: 'Thinking.', signature: 'EqQBCkgIAR' }],
    ],
    [
      'a signature without text (a Gemini thought signature)',
      { summary: [], encrypted_content: 'modelgate.signature:CiQBVKhc' },
      [{ type: 'reasoning', text: '', signature: 'CiQBVKhc' }],
    ],
    ['redacted reasoning carried in encrypted_content', { summary: [], encrypted_content: 'modelgate.redacted:EmwKAhgB' }, [
      { type: 'redacted_reasoning', data: 'EmwKAhgB' },
    ]],
    [
      "OpenAI's own encrypted reasoning, which no other provider can read: the text goes on unsigned",
      { summary: [{ type: 'summary_text', text: 'Plan.' }], encrypted_content: 'gAAAAABoR2x' },
      [{ type: 'reasoning', text: 'Plan.' }],
    ],
    ['nothing to send: no turn', { summary: [], encrypted_content: 'gAAAAABoR2x' }, []],
  ])('reads a reasoning item: %s', (_, fields, parts) => {
    const messages = messagesOf([hi, { type: 'reasoning', id: 'rs_1', ...fields }]);
    expect(messages.slice(1)).toEqual(parts.length === 0 ? [] : [{ role: 'assistant', content: parts }]);
  });

  it('drops records of OpenAI-hosted tools that hold nothing another model could use', () => {
    const messages = messagesOf([
      hi,
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'paris weather' } },
      { type: 'mcp_list_tools', id: 'mcpl_1', server_label: 'docs', tools: [] },
      { role: 'assistant', content: 'Sunny.' },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [text('hi')] },
      { role: 'assistant', content: [text('Sunny.')] },
    ]);
  });
});

describe('chatRequestFromResponses: parameters', () => {
  it.each<[string, Body, Partial<ChatRequest>]>([
    ['max_output_tokens', { max_output_tokens: 300 }, { maxTokens: 300 }],
    ['no limit', {}, { maxTokens: undefined }],
    ['sampling', { temperature: 0.3, top_p: 0.9 }, { temperature: 0.3, topP: 0.9 }],
    ['tool choice auto', { tool_choice: 'auto' }, { toolChoice: 'auto' }],
    ['tool choice none', { tool_choice: 'none' }, { toolChoice: 'none' }],
    ['tool choice required', { tool_choice: 'required' }, { toolChoice: 'required' }],
    ['tool choice by name', { tool_choice: { type: 'function', name: 'weather' } }, { toolChoice: { name: 'weather' } }],
    ['an allowed-tools list keeps its mode', { tool_choice: { type: 'allowed_tools', mode: 'required', tools: [] } }, { toolChoice: 'required' }],
    ['a built-in tool choice goes with the built-in tools', { tool_choice: { type: 'web_search_preview' } }, { toolChoice: undefined }],
    ['parallel tool calls', { parallel_tool_calls: false }, { parallelToolCalls: false }],
    ['JSON object', { text: { format: { type: 'json_object' } } }, { responseFormat: { type: 'json_object' } }],
    [
      'JSON schema',
      { text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } } },
      { responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    ],
    ['plain text is the default', { text: { format: { type: 'text' }, verbosity: 'low' } }, { responseFormat: undefined }],
    ['reasoning effort minimal', { reasoning: { effort: 'minimal' } }, { reasoning: { effort: 'minimal' } }],
    ['reasoning effort high, summary asked', { reasoning: { effort: 'high', summary: 'auto' } }, { reasoning: { effort: 'high' } }],
    ['reasoning effort none asks for none', { reasoning: { effort: 'none' } }, { reasoning: undefined }],
    ['stream and end user', { stream: true, user: 'u-1' }, { stream: true, user: 'u-1' }],
    ['store is ignored', { store: true }, { stream: false }],
  ])('maps %s', (_, fields, expected) => {
    expect(internal({ input: 'hi', ...fields })).toMatchObject({ model: 'claude-sonnet-4-5', stream: false, ...expected });
  });

  it('keeps function tools and drops built-in ones', () => {
    const request = internal({
      input: 'hi',
      tools: [
        { type: 'web_search' },
        { type: 'function', name: 'shell', description: 'Runs a command', parameters: { type: 'object' }, strict: false },
        { type: 'function', name: 'update_plan', parameters: null, strict: null },
      ],
    });
    expect(request.tools).toEqual([{ name: 'shell', description: 'Runs a command', parameters: { type: 'object' } }, { name: 'update_plan' }]);
  });

  it('offers no tools when only built-in ones were asked for', () => {
    expect(internal({ input: 'hi', tools: [{ type: 'web_search' }] }).tools).toBeUndefined();
  });
});

describe('chatRequestFromResponses: what cannot be served is a 400 naming the field', () => {
  const stateless = "this model's channel serves Responses without stored state";

  it.each<[string, Body, string, string]>([
    ['a previous response', { previous_response_id: 'resp_1', input: 'hi' }, 'previous_response_id', stateless],
    ['a stored conversation', { conversation: 'conv_1', input: 'hi' }, 'conversation', stateless],
    ['a stored prompt', { prompt: { id: 'pmpt_1' }, input: 'hi' }, 'prompt', stateless],
    [
      'an image stored at OpenAI',
      { input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', detail: 'auto', file_id: 'file-img' }] }] },
      'input.0.content.1',
      'file_id "file-img"',
    ],
    [
      'a file stored at OpenAI, in a function call output',
      { input: [hi, { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'file-doc' }] }] },
      'input.1.output.0',
      'file_id "file-doc"',
    ],
    ['an image without a source', { input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] }, 'input.0.content.0', 'image_url'],
    ['a file without data', { input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }] }, 'input.0.content.0', 'file_data'],
    ['an unknown content part', { input: [{ role: 'user', content: [{ type: 'input_video' }] }] }, 'input.0.content.0', '"input_video"'],
    [
      'an image in a system message',
      { input: [{ role: 'system', content: [{ type: 'input_image', detail: 'auto', image_url: 'https://x/y.png' }] }, hi] },
      'input.0.content.0',
      'text only',
    ],
    ['an unknown role', { input: [{ role: 'tool', content: 'x' }] }, 'input.0.role', 'must be user'],
    ['a message without content', { input: [{ type: 'message', role: 'user' }] }, 'input.0.content', 'must be a string'],
    ['a function call without a call id', { input: [hi, { type: 'function_call', name: 'f', arguments: '{}' }] }, 'input.1.call_id', 'must be a string'],
    ['a function call output without output', { input: [hi, { type: 'function_call_output', call_id: 'c' }] }, 'input.1.output', 'must be a string'],
    ['a custom tool call without input', { input: [hi, { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch' }] }, 'input.1.input', 'must be a string'],
    ['a custom tool without a name', { input: 'hi', tools: [{ type: 'custom' }] }, 'tools.0.name', 'a custom tool needs a name'],
    ['a custom tool choice without a name', { input: 'hi', tool_choice: { type: 'custom' } }, 'tool_choice.name', 'needs a name'],
    [
      'a local shell call',
      { input: [hi, { type: 'local_shell_call', id: 'ls', call_id: 'c', status: 'completed', action: { type: 'exec', command: ['ls'], env: {} } }] },
      'input.1',
      '"local_shell_call"',
    ],
    ['a stored item reference', { input: [{ type: 'item_reference', id: 'msg_1' }, hi] }, 'input.0', '"item_reference"'],
    ['an input without a message', { input: [] }, 'input', 'at least one message'],
    ['a function tool without a name', { input: 'hi', tools: [{ type: 'function', parameters: {} }] }, 'tools.0.name', 'needs a name'],
    ['a function tool choice without a name', { input: 'hi', tool_choice: { type: 'function' } }, 'tool_choice.name', 'needs a name'],
  ])('%s', (_, body, param, words) => {
    const error = thrownBy(() => internal(body));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, param });
    expect((error as AppError).message).toContain(`${param}: `);
    expect((error as AppError).message).toContain(words);
  });
});

describe('inResponsesTerms', () => {
  it("names the input, not chat's messages, in a provider's refusal of the conversation", () => {
    const request = internal({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64', detail: 'auto' }] }] });
    const refused = thrownBy(() => geminiProvider.chat({ id: 1, key: 'AIza-test-key', origin: 'http://upstream.test', pathPrefix: '', settings: {} }, 'gemini-2.5-flash').request(request));
    expect(refused).toMatchObject({ param: 'messages' });
    expect(inResponsesTerms(refused)).toMatchObject({ code: 'invalid_request', status: 400, param: 'input', message: 'input: a data URL is not valid' });
  });

  it('leaves errors about other fields as they are', () => {
    const error = new AppError('invalid_request', 'n: Anthropic returns one choice; n must be 1', { param: 'n' });
    expect(inResponsesTerms(error)).toBe(error);
  });
});
