// Chat requests in the internal form (docs/api.md 2.6) as Gemini generateContent calls.
import { AppError } from '@modelgate/errors';
import type { ChatMessage, ChatRequest } from '../../src/core/chat';
import { geminiProvider } from '../../src/providers/gemini';
import { thrownBy } from '../thrown';

const TEST_CHANNEL = { id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} };

const CHANNEL = { id: 1, key: 'AIza-test-key', origin: 'http://upstream.test', pathPrefix: '/proxy', settings: {} };
const SKIP = 'skip_thought_signature_validator';

function chat(fields: Partial<ChatRequest>): ChatRequest {
  return { model: 'gemini-2.5-flash', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, ...fields };
}

function bodyOf(request: ChatRequest): Record<string, unknown> {
  return JSON.parse(geminiProvider.chat(CHANNEL, 'gemini-2.5-flash').request(request).body as string) as Record<string, unknown>;
}

function user(text: string): ChatMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}

const CALL_WEATHER = { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' } as const;

describe('Gemini chat request: address', () => {
  it.each([
    [false, '/proxy/v1beta/models/gemini-2.5-flash:generateContent'],
    [true, '/proxy/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'],
  ])('stream %s posts to %s with the channel key', (stream, path) => {
    const call = geminiProvider.chat(CHANNEL, 'gemini-2.5-flash').request(chat({ stream }));
    expect(call.path).toBe(path);
    expect(call.headers).toEqual({ 'x-goog-api-key': 'AIza-test-key', 'content-type': 'application/json' });
  });

  it('encodes the upstream model in the path', () => {
    const call = geminiProvider.chat({ id: 1, key: 'k', origin: 'http://upstream.test', pathPrefix: '', settings: {} }, 'tuned/model?x').request(chat({}));
    expect(call.path).toBe('/v1beta/models/tuned%2Fmodel%3Fx:generateContent');
  });
});

describe('Gemini chat request: conversation', () => {
  it.each<[string, Partial<ChatRequest>, Record<string, unknown>]>([
    [
      'system instructions in order, user text',
      { system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }], messages: [user('hi')] },
      {
        systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] },
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      },
    ],
    ['no system instruction when the system text is empty', { system: [{ type: 'text', text: '' }] }, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
    [
      'assistant turns as model, consecutive turns of a role merged, empty turns left out',
      {
        messages: [
          user('one'),
          user('two'),
          { role: 'assistant', content: [{ type: 'text', text: 'three' }] },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'thinking without a signature' }] },
          user('four'),
        ],
      },
      {
        contents: [
          { role: 'user', parts: [{ text: 'one' }, { text: 'two' }] },
          { role: 'model', parts: [{ text: 'three' }] },
          { role: 'user', parts: [{ text: 'four' }] },
        ],
      },
    ],
  ])('%s', (_, fields, expected) => {
    expect(bodyOf(chat(fields))).toEqual(expected);
  });
});

describe('Gemini chat request: media', () => {
  const url = (address: string) => ({ kind: 'url', url: address }) as const;
  const inline = (mediaType: string, data: string) => ({ kind: 'base64', mediaType, data }) as const;
  it.each<[string, ChatMessage['content'][number], Record<string, unknown>]>([
    ['a base64 data URL image', { type: 'image', source: url('data:image/png;base64,iVBORw0=') }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0=' } }],
    [
      'a percent-encoded data URL',
      { type: 'file', source: url('data:text/plain,caf%C3%A9') },
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('café').toString('base64') } },
    ],
    ['an inline image', { type: 'image', source: inline('image/webp', 'UklGRg==') }, { inlineData: { mimeType: 'image/webp', data: 'UklGRg==' } }],
    [
      'an http image with an extension',
      { type: 'image', source: url('https://example.com/a/cat.PNG?size=2#top'), detail: 'high' },
      { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/a/cat.PNG?size=2#top' } },
    ],
    [
      'an http image without one',
      { type: 'image', source: url('https://example.com/render?id=7') },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render?id=7' } },
    ],
    [
      'a linked document',
      { type: 'file', source: url('https://example.com/report') },
      { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/report' } },
    ],
    [
      'an inline document',
      { type: 'file', source: inline('application/pdf', 'JVBERi0='), name: 'a.pdf' },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ],
    ['audio', { type: 'audio', format: 'wav', data: 'UklGRiQ=' }, { inlineData: { mimeType: 'audio/wav', data: 'UklGRiQ=' } }],
  ])('%s', (_, part, expected) => {
    const body = bodyOf(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }] }));
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'look' }, expected] }]);
  });

  it('refuses a data URL it cannot read', () => {
    const request = chat({ messages: [{ role: 'user', content: [{ type: 'image', source: { kind: 'url', url: 'data:image/png;base64' } }] }] });
    expect(() => bodyOf(request)).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'messages' }));
  });
});

describe('Gemini chat request: tools', () => {
  it('sends a call and its results back under the function name the call had', () => {
    const body = bodyOf(
      chat({
        messages: [
          user('weather in Paris and Rome?'),
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Two cities, two calls.', signature: 'sig-A' },
              CALL_WEATHER,
              { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_2', content: [{ type: 'text', text: '14:00' }] }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temp":21}' }] }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', content: [{ type: 'text', text: 'timeout' }], isError: true }] },
          user('thanks'),
        ],
      }),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-A' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { content: '14:00' } } },
          { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
          { functionResponse: { name: 'get_weather', response: { error: 'timeout' } } },
          { text: 'thanks' },
        ],
      },
    ]);
  });

  it('sends an image a tool returned after its response', () => {
    const body = bodyOf(
      chat({
        messages: [
          user('draw'),
          { role: 'assistant', content: [{ type: 'reasoning', text: '', signature: 'sig' }, { ...CALL_WEATHER, name: 'render' }] },
          {
            role: 'tool',
            content: [
              {
                type: 'tool_result',
                toolCallId: 'call_1',
                content: [{ type: 'text', text: 'done' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } }],
              },
            ],
          },
        ],
      }),
    );
    expect((body.contents as unknown[])[2]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { name: 'render', response: { content: 'done' } } }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
    });
  });

  it.each<[string, ChatMessage[]]>([
    ['arguments that are not JSON', [user('x'), { role: 'assistant', content: [{ ...CALL_WEATHER, arguments: '{"city":' }] }]],
    ['arguments that are not an object', [user('x'), { role: 'assistant', content: [{ ...CALL_WEATHER, arguments: '["Paris"]' }] }]],
    ['a result for a call never made', [user('x'), { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_9', content: [] }] }]],
  ])('refuses %s as invalid messages', (_, messages) => {
    const thrown = thrownBy(() => bodyOf(chat({ messages })));
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'invalid_request', status: 400, param: 'messages' });
  });

  it('declares tools with their JSON Schema', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const body = bodyOf(
      chat({
        tools: [
          { name: 'get_weather', description: 'Current weather', parameters },
          { name: 'ping' },
        ],
      }),
    );
    expect(body.tools).toEqual([
      { functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parametersJsonSchema: parameters }, { name: 'ping' }] },
    ]);
  });

  it.each<[ChatRequest['toolChoice'], Record<string, unknown> | undefined]>([
    [undefined, undefined],
    ['auto', { functionCallingConfig: { mode: 'AUTO' } }],
    ['none', { functionCallingConfig: { mode: 'NONE' } }],
    ['required', { functionCallingConfig: { mode: 'ANY' } }],
    [{ name: 'get_weather' }, { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } }],
  ])('tool choice %j -> toolConfig %j', (toolChoice, expected) => {
    expect(bodyOf(chat({ tools: [{ name: 'get_weather' }], toolChoice })).toolConfig).toEqual(expected);
  });

  it('sends no tool config without tools', () => {
    expect(bodyOf(chat({ toolChoice: 'required' }))).not.toHaveProperty('toolConfig');
  });
});

describe('Gemini chat request: thought signatures', () => {
  it.each<[string, ChatMessage['content'], Record<string, unknown>[]]>([
    [
      'a signed reasoning part lends its signature to the text after it; its text stays home',
      [{ type: 'reasoning', text: 'Let me think.', signature: 'sig-T' }, { type: 'text', text: 'Hello.' }],
      [{ text: 'Hello.', thoughtSignature: 'sig-T' }],
    ],
    [
      'a signature only reaches the part right after it',
      [{ type: 'reasoning', text: '', signature: 'sig-T' }, { type: 'text', text: 'a' }, { type: 'text', text: 'b' }],
      [{ text: 'a', thoughtSignature: 'sig-T' }, { text: 'b' }],
    ],
    [
      'parallel calls: only the first carries a signature, as Gemini sent it',
      [{ type: 'reasoning', text: '', signature: 'sig-C' }, CALL_WEATHER, { ...CALL_WEATHER, id: 'call_2', arguments: '{"city":"Rome"}' }],
      [
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-C' },
        { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
      ],
    ],
    [
      'a call without a signature (another model made it) gets the documented stand-in',
      [{ type: 'text', text: 'Checking.' }, CALL_WEATHER],
      [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SKIP }],
    ],
    [
      'Anthropic redacted reasoning is left out',
      [{ type: 'redacted_reasoning', data: 'opaque' }, { type: 'text', text: 'ok' }],
      [{ text: 'ok' }],
    ],
  ])('%s', (_, content, parts) => {
    const body = bodyOf(chat({ messages: [user('q'), { role: 'assistant', content }] }));
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'q' }] }, { role: 'model', parts }]);
  });

  it('round-trips the signatures of an answer it translated', () => {
    const answer = geminiProvider.chat(TEST_CHANNEL, 'm').response({
      responseId: 'r1',
      candidates: [
        {
          index: 0,
          finishReason: 'STOP',
          content: {
            role: 'model',
            parts: [
              { text: 'The user wants weather.', thought: true },
              { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-real' },
            ],
          },
        },
      ],
    });
    const [choice] = answer.choices;
    const body = bodyOf(
      chat({
        messages: [
          user('weather?'),
          { role: 'assistant', content: choice?.content ?? [] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_r1_0', content: [{ type: 'text', text: 'sunny' }] }] },
        ],
      }),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-real' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'sunny' } } }] },
    ]);
  });

  it('drops reasoning a user turn carries', () => {
    const body = bodyOf(chat({ messages: [{ role: 'user', content: [{ type: 'reasoning', text: 'x', signature: 's' }, { type: 'text', text: 'hi' }] }] }));
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'hi' }] }]);
  });
});

describe('Gemini chat request: generation config', () => {
  it.each<[string, Partial<ChatRequest>, Record<string, unknown> | undefined]>([
    ['nothing set: no generationConfig', {}, undefined],
    [
      'sampling fields',
      { maxTokens: 300, temperature: 0.2, topP: 0.9, stop: ['END'], n: 2, seed: 7, user: 'u-1', parallelToolCalls: false },
      { maxOutputTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ['END'], candidateCount: 2, seed: 7 },
    ],
    ['json_object', { responseFormat: { type: 'json_object' } }, { responseMimeType: 'application/json' }],
    [
      'json_schema',
      { responseFormat: { type: 'json_schema', name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } }, strict: true } },
      { responseMimeType: 'application/json', responseJsonSchema: { type: 'object', properties: { name: { type: 'string' } } } },
    ],
    ['a thinking budget', { reasoning: { budgetTokens: 2048 } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 } }],
    ['a budget wins over an effort', { reasoning: { budgetTokens: 100, effort: 'high' } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 100 } }],
    ['effort minimal', { reasoning: { effort: 'minimal' } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } }],
    ['effort low', { reasoning: { effort: 'low' } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } }],
    ['effort medium', { reasoning: { effort: 'medium' } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 8192 } }],
    ['effort high', { reasoning: { effort: 'high' } }, { thinkingConfig: { includeThoughts: true, thinkingBudget: 24576 } }],
    ['reasoning asked without a size: the model decides', { reasoning: {} }, { thinkingConfig: { includeThoughts: true } }],
  ])('%s', (_, fields, expected) => {
    const body = bodyOf(chat(fields));
    expect(body.generationConfig).toEqual(expected);
    expect(Object.keys(body).sort()).toEqual(expected === undefined ? ['contents'] : ['contents', 'generationConfig']);
  });
});
