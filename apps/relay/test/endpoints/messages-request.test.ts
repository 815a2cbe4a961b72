// `POST /v1/messages` and `/v1/messages/count_tokens` bodies (docs/api.md 2.9): the prompt as the
// reservation estimates it and as the relay counts it when an upstream reports none (2.5).
import type Anthropic from '@anthropic-ai/sdk';
import { base64FileTokens, IMAGE_TOKENS } from '../../src/dialects/openai/chat-request';
import { type MessagesBody, messagesPromptPieces, parseCountTokensRequest, parseMessagesRequest } from '../../src/dialects/anthropic/request';
import { countPromptTextTokens, countPromptTokens, estimatePromptTokens, estimateTextTokens } from '../../src/features/relay/tokens';

function parse(body: Partial<Anthropic.MessageCreateParamsNonStreaming> & Record<string, unknown>): MessagesBody {
  return parseMessagesRequest(Buffer.from(JSON.stringify({ model: 'claude-opus-4-5', max_tokens: 1000, ...body })));
}

const estimateOf = (body: MessagesBody) => estimatePromptTokens(messagesPromptPieces(body));
const sumOf = (texts: string[]) => texts.reduce((sum, text) => sum + estimateTextTokens(text), 0);

const PDF_BASE64 = Buffer.alloc(40_000, 7).toString('base64');

describe('messagesPromptPieces', () => {
  it('estimates the system prompt, every text and the tool definitions by their size', () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const body = parse({
      system: [{ type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } }],
      tools,
      messages: [
        { role: 'user', content: 'What is the weather like in Paris today?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }] },
      ],
    });
    expect(estimateOf(body)).toBe(sumOf(['You are a careful assistant.', 'What is the weather like in Paris today?', 'Let me check.', JSON.stringify(tools)]));
  });

  it('counts images at IMAGE_TOKENS, documents by size, tool calls and results as what the model reads, not earlier thinking', () => {
    const image = { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' };
    const body = parse({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: image },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'a long chain of thought '.repeat(100), signature: 'c2lnbmF0dXJl' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18 degrees' }, { type: 'image', source: image }] }],
        },
      ],
    });
    const textTokens = sumOf(['plain notes', 'get_weather', '{"city":"Paris"}', '18 degrees']);
    expect(estimateOf(body)).toBe(textTokens + 3 * IMAGE_TOKENS + base64FileTokens(PDF_BASE64));
  });

  it('reads block types it does not know as their JSON text, and anything in unchecked nested content as nothing', () => {
    const search = { type: 'search_result', source: 'https://example.com', title: 'Example', content: [{ type: 'text', text: 'found' }] };
    const body = parse({
      messages: [
        { role: 'user', content: [search] as unknown as Anthropic.ContentBlockParam[] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [null, 3, 'x'] as unknown as Anthropic.TextBlockParam[] }] },
      ],
    });
    expect(estimateOf(body)).toBe(estimateTextTokens(JSON.stringify(search)));
  });

  it('charges without upstream usage: the texts tokenized as one, media as reserved', () => {
    const body = parseCountTokensRequest(Buffer.from(JSON.stringify({ model: 'm', system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello to me' }] })));
    const pieces = messagesPromptPieces(body);
    expect(pieces).toEqual({ texts: ['Be brief.', 'Say hello to me'], mediaTokens: 0 });
    expect(countPromptTokens(pieces)).toBe(countPromptTextTokens('Be brief.\nSay hello to me'));
  });
});
