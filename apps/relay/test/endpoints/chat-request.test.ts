// `POST /v1/chat/completions` bodies (docs/api.md 2.7): what is refused (400 naming the field),
// what is kept, and the tokens reserved and charged for a prompt (docs/api.md 2.5).
import { AppError } from '@modelgate/errors';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import {
  type ChatCompletionBody,
  countChatPromptTokens,
  estimateChat,
  IMAGE_TOKENS,
  parseChatCompletionRequest,
} from '../../src/dialects/openai/chat-request';
import { countPromptTextTokens, estimateTextTokens } from '../../src/features/relay/tokens';

function parse(body: unknown): ChatCompletionBody {
  return parseChatCompletionRequest(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
}

function refusal(body: unknown): AppError {
  try {
    parse(body);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('the body was accepted');
}

const hi = [{ role: 'user', content: 'hi' }];

describe('parseChatCompletionRequest', () => {
  it('accepts what the OpenAI SDK sends, unknown fields kept', () => {
    const body: ChatCompletionCreateParams = {
      model: 'gpt-4o',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'system', content: [{ type: 'text', text: 'Plain text.' }] },
        {
          role: 'user',
          name: 'ann',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_id: 'file-1' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'ok' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      ],
      max_completion_tokens: 100,
      temperature: 0,
      top_p: 1,
      n: 2,
      stop: ['\n'],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} }, strict: true } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' } } },
      reasoning_effort: 'low',
      logit_bias: { '50256': -100 },
      metadata: { run: '1' },
    };
    expect(parse(body)).toEqual(body);
  });

  it('accepts a NUL inside messages (never stored) but not in model (stored on the consume row)', () => {
    expect(parse({ model: 'm', messages: [{ role: 'user', content: 'a\u0000b' }] }).messages).toHaveLength(1);
    expect(refusal({ model: 'm\u0000', messages: hi })).toMatchObject({ code: 'invalid_request', param: 'model' });
  });

  it.each<[string, unknown, string]>([
    ['no model', { messages: hi }, 'model'],
    ['an empty model', { model: '', messages: hi }, 'model'],
    ['no messages', { model: 'm' }, 'messages'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['a message that is not an object', { model: 'm', messages: ['hi'] }, 'messages.0'],
    ['an unknown role', { model: 'm', messages: [{ role: 'bot', content: 'hi' }] }, 'messages.0.role'],
    ['no role', { model: 'm', messages: [{ content: 'hi' }] }, 'messages.0.role'],
    ['content that is a number', { model: 'm', messages: [{ role: 'user', content: 5 }] }, 'messages.0.content'],
    ['no user content', { model: 'm', messages: [{ role: 'user' }] }, 'messages.0.content'],
    ['an unknown content part', { model: 'm', messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }] }, 'messages.0.content'],
    ['an image part without a URL', { model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'messages.0.content'],
    ['a tool message without tool_call_id', { model: 'm', messages: [...hi, { role: 'tool', content: 'x' }] }, 'messages.1.tool_call_id'],
    [
      'a tool call without a function name',
      { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] }] },
      'messages.0.tool_calls.0.function.name',
    ],
    ['temperature above 2', { model: 'm', messages: hi, temperature: 2.5 }, 'temperature'],
    ['top_p above 1', { model: 'm', messages: hi, top_p: 1.1 }, 'top_p'],
    ['n of 0', { model: 'm', messages: hi, n: 0 }, 'n'],
    ['n above 128', { model: 'm', messages: hi, n: 129 }, 'n'],
    ['max_tokens of 0', { model: 'm', messages: hi, max_tokens: 0 }, 'max_tokens'],
    ['a fractional max_completion_tokens', { model: 'm', messages: hi, max_completion_tokens: 1.5 }, 'max_completion_tokens'],
    ['five stop sequences', { model: 'm', messages: hi, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['stream as a string', { model: 'm', messages: hi, stream: 'yes' }, 'stream'],
    ['a function tool without its function', { model: 'm', messages: hi, tools: [{ type: 'function' }] }, 'tools.0.function'],
    ['an unknown tool_choice', { model: 'm', messages: hi, tool_choice: 'sometimes' }, 'tool_choice'],
    ['an unknown response_format', { model: 'm', messages: hi, response_format: { type: 'xml' } }, 'response_format.type'],
  ])('refuses %s, naming the field', (_, body, param) => {
    expect(refusal(body)).toMatchObject({ code: 'invalid_request', status: 400, param });
  });

  it('refuses a body that is not a JSON object as invalid_json', () => {
    expect(refusal('{"model":')).toMatchObject({ code: 'invalid_json' });
    expect(refusal('[]')).toMatchObject({ code: 'invalid_json' });
  });
});

describe('estimateChat and countChatPromptTokens', () => {
  const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(1_000)}` } };

  it.each<[string, Record<string, unknown>, number]>([
    ['max_completion_tokens per choice', { max_completion_tokens: 100, n: 3 }, 300],
    ['max_tokens when max_completion_tokens is absent', { max_tokens: 50 }, 50],
    ['4096 when the client set no limit', {}, 4096],
  ])('reserves completion tokens: %s', (_, fields, completionTokens) => {
    expect(estimateChat(parse({ model: 'm', messages: hi, ...fields })).completionTokens).toBe(completionTokens);
  });

  it('counts every text of the prompt: system, user, assistant reasoning, tool calls and results, tool definitions', () => {
    const texts = ['Be brief.', 'Look this up', 'Thinking', 'f', '{"q":"x"}', 'found it'];
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const body = parse({
      model: 'm',
      messages: [
        { role: 'system', content: texts[0] },
        { role: 'user', content: [{ type: 'text', text: texts[1] }] },
        {
          role: 'assistant',
          content: null,
          reasoning_content: texts[2],
          tool_calls: [{ id: 'c', type: 'function', function: { name: texts[3], arguments: texts[4] } }],
        },
        { role: 'tool', tool_call_id: 'c', content: texts[5] },
      ],
      tools,
    });
    const all = [...texts, JSON.stringify(tools)];
    expect(estimateChat(body).promptTokens).toBe(all.reduce((sum, text) => sum + estimateTextTokens(text), 0));
    expect(countChatPromptTokens(body)).toBe(countPromptTextTokens(all.join('\n')));
  });

  it('counts each image at a fixed high count, whatever its size, in the reservation and the charge', () => {
    const body = parse({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'Compare' }, image, image] }] });
    expect(estimateChat(body).promptTokens).toBe(estimateTextTokens('Compare') + 2 * IMAGE_TOKENS);
    expect(countChatPromptTokens(body)).toBe(countPromptTextTokens('Compare') + 2 * IMAGE_TOKENS);
    expect(IMAGE_TOKENS).toBeGreaterThanOrEqual(1_445); // OpenAI's high-detail maximum
  });

  it('counts audio by its size: longer audio reserves more', () => {
    const audio = (bytes: number) =>
      parse({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'A'.repeat(bytes), format: 'mp3' } }] }] });
    const short = estimateChat(audio(40_000)).promptTokens;
    expect(short).toBeGreaterThan(0);
    expect(estimateChat(audio(400_000)).promptTokens).toBe(short * 10);
  });

  it('reserves at least what a text prompt is charged', () => {
    const body = parse({ model: 'm', messages: [{ role: 'user', content: 'The gateway reserves before it calls. '.repeat(50) }] });
    expect(estimateChat(body).promptTokens).toBeGreaterThanOrEqual(countChatPromptTokens(body));
  });

  it('stays cheap on a 1 MB body', () => {
    const body = parse({
      model: 'm',
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(1_000_000)}` } }] },
        ...Array.from({ length: 1_000 }, () => ({ role: 'user', content: 'x'.repeat(1_000) })),
      ],
    });
    const started = process.hrtime.bigint();
    estimateChat(body);
    countChatPromptTokens(body);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(100);
  });
});
