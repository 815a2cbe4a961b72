// docs/api.md 2.5 and 2.10: what a Responses request reserves (its input by size, no tokenizer, plus
// max_output_tokens) and what its prompt is charged when the upstream reports no usage.
import { IMAGE_TOKENS } from '../src/dialects/openai/chat-request';
import { countResponsesPromptTokens, estimateResponses, parseResponsesRequest, type ResponsesBody } from '../src/dialects/responses/request';
import { countPromptTextTokens, estimateTextTokens } from '../src/features/relay/tokens';

function parse(body: Record<string, unknown>): ResponsesBody {
  return parseResponsesRequest(Buffer.from(JSON.stringify(body)));
}

const TOOLS = [{ type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } } };
/** 3,000 base64 characters: 2,250 bytes, 563 tokens at 4 bytes per token. */
const FILE_DATA = `data:application/pdf;base64,${'A'.repeat(3_000)}`;

/** Every kind of input item a Codex turn sends, and what of each reaches the model as text. */
const BODY = {
  model: 'gpt-5',
  instructions: 'You are a coding agent.',
  input: [
    { role: 'developer', content: 'Use the tools.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is in this picture and file?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA' }, { type: 'input_file', file_data: FILE_DATA, filename: 'a.pdf' }, { type: 'input_file', file_id: 'file-1' }] },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Thinking it over.' }], encrypted_content: 'opaque' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me check.' }, { type: 'refusal', refusal: 'Not that.' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
    { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'Done.' }] },
    { type: 'web_search_call', id: 'ws_1', status: 'completed' },
  ],
  tools: TOOLS,
  text: { format: { type: 'json_schema', name: 'answer', schema: SCHEMA } },
};
const TEXTS = [
  'You are a coding agent.',
  'Use the tools.',
  'What is in this picture and file?',
  'Thinking it over.',
  'Let me check.',
  'Not that.',
  'get_weather',
  '{"city":"Paris"}',
  'sunny',
  'apply_patch',
  '*** Begin Patch',
  'Done.',
  JSON.stringify(TOOLS),
  JSON.stringify(SCHEMA),
];
const MEDIA_TOKENS = IMAGE_TOKENS + Math.ceil(Math.floor((FILE_DATA.length * 3) / 4) / 4);

describe('estimateResponses', () => {
  it('reserves every text of the input by size, an image as one image, a file by its size, plus 4096 output tokens', () => {
    const promptTokens = TEXTS.reduce((sum, text) => sum + estimateTextTokens(text), MEDIA_TOKENS);
    expect(estimateResponses(parse(BODY))).toEqual({ promptTokens, completionTokens: 4096 });
  });

  it('reserves max_output_tokens when set, and a string input by its size', () => {
    expect(estimateResponses(parse({ model: 'gpt-5', input: 'x'.repeat(400), max_output_tokens: 50 }))).toEqual({ promptTokens: 100, completionTokens: 50 });
  });

  it('sizes a megabyte-long image without reading it', () => {
    const image = { type: 'input_image', image_url: `data:image/png;base64,${'A'.repeat(1024 * 1024)}` };
    expect(estimateResponses(parse({ model: 'gpt-5', input: [{ role: 'user', content: [image] }] })).promptTokens).toBe(IMAGE_TOKENS);
  });
});

describe('countResponsesPromptTokens', () => {
  it('tokenizes the texts as one, media as reserved', () => {
    expect(countResponsesPromptTokens(parse(BODY))).toBe(countPromptTextTokens(TEXTS.join('\n')) + MEDIA_TOKENS);
    expect(countResponsesPromptTokens(parse({ model: 'gpt-5', input: 'Say hello to me' }))).toBe(4);
  });
});
