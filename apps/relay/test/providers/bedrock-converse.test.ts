// Bedrock's Converse API (docs/api.md 2.6, 2.12): internal chat requests written as Converse
// requests, Converse answers and ConverseStream events read back, a tool round trip and reasoning.
import { AppError } from '@modelgate/errors';
import type { ChatRequest, ChatStreamEvent } from '../../src/core/chat';
import type { UpstreamTarget } from '../../src/core/provider';
import { StreamEventError } from '../../src/features/relay/event-stream';
import { UpstreamFailure } from '../../src/features/upstream/client';
import { bedrockProvider } from '../../src/providers/bedrock';
import { converseRequestOf } from '../../src/providers/bedrock/converse-request';
import { thrownBy } from '../thrown';

const NOVA = 'amazon.nova-pro-v1:0';
const NOVA_2 = 'us.amazon.nova-2-lite-v1:0';
const channel: UpstreamTarget = { id: 1, key: 'k', origin: 'https://bedrock-runtime.us-east-1.amazonaws.com', pathPrefix: '', settings: { region: 'us-east-1' } };
const PNG = 'iVBORw0KGgo=';

function request(fields: Partial<ChatRequest>): ChatRequest {
  return { model: 'nova', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, ...fields };
}

const WEATHER = { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('converseRequestOf', () => {
  it('writes system, alternating turns and inferenceConfig (temperature capped at 1)', () => {
    const body = converseRequestOf(NOVA, request({
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: '' }, { type: 'text', text: 'Answer in French.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'one' }] },
        { role: 'user', content: [{ type: 'text', text: 'two' }, { type: 'text', text: '' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'three' }] },
        { role: 'user', content: [{ type: 'text', text: 'four' }] },
      ],
      maxTokens: 256,
      temperature: 1.4,
      topP: 0.9,
      stop: ['END'],
      seed: 7,
      user: 'u1',
      responseFormat: { type: 'json_object' },
    }));
    expect(body).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
      messages: [
        { role: 'user', content: [{ text: 'one' }, { text: 'two' }] },
        { role: 'assistant', content: [{ text: 'three' }] },
        { role: 'user', content: [{ text: 'four' }] },
      ],
      inferenceConfig: { maxTokens: 256, temperature: 1, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('sends images and files inline (base64 bytes) with their formats', () => {
    const body = converseRequestOf(NOVA, request({
      messages: [{
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { kind: 'url', url: `data:image/png;base64,${PNG}` } },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } },
          { type: 'file', source: { kind: 'url', url: 'data:application/pdf;base64,JVBERi0=' }, name: 'report.pdf' },
          { type: 'file', source: { kind: 'url', url: 'data:text/plain,hello' } },
        ],
      }],
    }));
    expect(body.messages[0]?.content).toEqual([
      { text: 'What is this?' },
      { image: { format: 'png', source: { bytes: PNG } } },
      { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
      { document: { format: 'pdf', name: 'report pdf (1)', source: { bytes: 'JVBERi0=' } } },
      { document: { format: 'txt', name: 'document (2)', source: { bytes: Buffer.from('hello').toString('base64') } } },
    ]);
  });

  it.each([
    ['an http image URL', { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' } }, /not by http\(s\) URL/],
    ['an image type Converse cannot read', { type: 'image', source: { kind: 'url', url: 'data:image/tiff;base64,AAAA' } }, /PNG, JPEG, GIF and WebP/],
    ['audio', { type: 'audio', format: 'wav', data: 'UklGRg==' }, /audio input/],
  ] as const)('refuses %s (dropping it would answer another question): 400 naming messages', (_name, part, message) => {
    const failure = thrownBy(() => converseRequestOf(NOVA, request({ messages: [{ role: 'user', content: [part] }] })));
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ status: 400, param: 'messages', message: expect.stringMatching(message) });
  });

  it('refuses n > 1', () => {
    expect(thrownBy(() => converseRequestOf(NOVA, request({ n: 2 })))).toMatchObject({ status: 400, param: 'n' });
  });

  it('offers tools as toolSpecs and maps each tool choice', () => {
    const tools = [WEATHER, { name: 'now' }];
    const specs = [
      { toolSpec: { name: 'get_weather', description: 'The weather of a city', inputSchema: { json: WEATHER.parameters } } },
      { toolSpec: { name: 'now', inputSchema: { json: { type: 'object', properties: {} } } } },
    ];
    expect(converseRequestOf(NOVA, request({ tools })).toolConfig).toEqual({ tools: specs });
    expect(converseRequestOf(NOVA, request({ tools, toolChoice: 'auto' })).toolConfig).toEqual({ tools: specs, toolChoice: { auto: {} } });
    expect(converseRequestOf(NOVA, request({ tools, toolChoice: 'required' })).toolConfig).toEqual({ tools: specs, toolChoice: { any: {} } });
    expect(converseRequestOf(NOVA, request({ tools, toolChoice: { name: 'now' } })).toolConfig).toEqual({ tools: specs, toolChoice: { tool: { name: 'now' } } });
    expect(converseRequestOf(NOVA, request({ tools, toolChoice: 'none' })).toolConfig).toBeUndefined();
  });

  it('writes a tool round trip: the call as toolUse, the result (error status, images) as toolResult in the next user turn', () => {
    const body = converseRequestOf(NOVA, request({
      tools: [WEATHER],
      toolChoice: 'none',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'I should look it up.', signature: 'sig-1' },
            { type: 'reasoning', text: 'unsigned reasoning of another provider' },
            { type: 'text', text: 'Looking.' },
            { type: 'tool_call', id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool_call', id: 'tooluse_2', name: 'get_weather', arguments: '' },
          ],
        },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'tooluse_1', content: [{ type: 'text', text: '18 degrees' }, { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: PNG } }] }] },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'tooluse_2', content: [], isError: true }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
    }));
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'I should look it up.', signature: 'sig-1' } } },
          { text: 'Looking.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'tooluse_1', content: [{ text: '18 degrees' }, { image: { format: 'png', source: { bytes: PNG } } }] } },
          { toolResult: { toolUseId: 'tooluse_2', content: [{ text: '' }], status: 'error' } },
          { text: 'Thanks' },
        ],
      },
    ]);
    // The conversation holds tool blocks: Converse needs the tools defined even under "none".
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: expect.objectContaining({ name: 'get_weather' }) }] });
  });

  it('defines the called tools when a turn after a tool loop offers none (Converse refuses tool blocks without a toolConfig)', () => {
    const body = converseRequestOf(NOVA, request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'tooluse_1', content: [{ type: 'text', text: '18 degrees' }] }] },
        { role: 'user', content: [{ type: 'text', text: 'Summarize' }] },
      ],
    }));
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: {} } } } }] });
  });

  it('refuses tool call arguments that are not a JSON object', () => {
    const messages = [{ role: 'assistant' as const, content: [{ type: 'tool_call' as const, id: 't', name: 'f', arguments: '[1]' }] }];
    expect(thrownBy(() => converseRequestOf(NOVA, request({ messages })))).toMatchObject({ status: 400, param: 'messages' });
  });

  it.each([
    [{ effort: 'minimal' as const }, 'low'],
    [{ effort: 'high' as const }, 'high'],
    [{ budgetTokens: 1024 }, 'low'],
    [{ budgetTokens: 4096 }, 'medium'],
    [{ budgetTokens: 16_000 }, 'high'],
    [{ budgetTokens: -1 }, 'medium'],
  ])('asks Nova 2 for reasoning %j as effort %s', (reasoning, effort) => {
    expect(converseRequestOf(NOVA_2, request({ reasoning })).additionalModelRequestFields).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: effort } });
  });

  it('drops reasoning on models that take no reasoning setting, and a zero budget everywhere', () => {
    expect(converseRequestOf(NOVA, request({ reasoning: { effort: 'high' } })).additionalModelRequestFields).toBeUndefined();
    expect(converseRequestOf(NOVA_2, request({ reasoning: { budgetTokens: 0 } })).additionalModelRequestFields).toBeUndefined();
  });
});

describe('Converse answers', () => {
  const wire = bedrockProvider.chat(channel, NOVA);

  it('reads reasoning, text and tool calls in order, the stop reason and the usage with cache tokens in the prompt', () => {
    const response = wire.response({
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Thinking.', signature: 'sig-9' } } },
            { reasoningContent: { redactedContent: 'cmVkYWN0ZWQ=' } },
            { text: 'Let me check.' },
            { toolUse: { toolUseId: 'tooluse_abc', name: 'get_weather', input: { city: 'Paris' } } },
            { citationsContent: { citations: [] } },
          ],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 12, outputTokens: 30, totalTokens: 842, cacheReadInputTokens: 700, cacheWriteInputTokens: 100 },
      metrics: { latencyMs: 321 },
    });
    expect(response.choices).toEqual([{
      index: 0,
      finishReason: 'tool_calls',
      content: [
        { type: 'reasoning', text: 'Thinking.', signature: 'sig-9' },
        { type: 'redacted_reasoning', data: 'cmVkYWN0ZWQ=' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_call', id: 'tooluse_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
    }]);
    expect(response.usage).toEqual({ promptTokens: 812, completionTokens: 30, cachedTokens: 700, cacheWriteTokens: 100, reasoningTokens: 0 });
    expect(response.id).toEqual(expect.any(String));
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['content_filtered', 'content_filter'],
    ['guardrail_intervened', 'content_filter'],
    ['something_new', 'stop'],
  ])('maps stopReason %s to %s', (stopReason, finishReason) => {
    const response = wire.response({ output: { message: { role: 'assistant', content: [{ text: 'x' }] } }, stopReason });
    expect(response.choices[0]?.finishReason).toBe(finishReason);
    expect(response.usage).toBeUndefined();
  });

  it('leaves usage to the relay when a count is not believable, and refuses a body that is no answer', () => {
    expect(wire.response({ output: { message: { content: [] } }, usage: { inputTokens: -1, outputTokens: 2 } }).usage).toBeUndefined();
    expect(thrownBy(() => wire.response({ message: 'nope' }))).toBeInstanceOf(UpstreamFailure);
  });
});

describe('ConverseStream decoding', () => {
  const event = (name: string, payload: unknown) => ({ event: name, data: JSON.stringify(payload), raw: '' });

  it('reads reasoning, text, a tool call in pieces, the stop reason and the closing usage', () => {
    const decoder = bedrockProvider.chat(channel, NOVA_2).stream();
    const events: ChatStreamEvent[] = [];
    const sent = [
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Let me think.' } }, p: 'abc' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-3' } } }),
      event('contentBlockStop', { contentBlockIndex: 0 }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Checking.' } }),
      event('contentBlockDelta', { contentBlockIndex: 1, delta: { text: '' } }),
      event('contentBlockStop', { contentBlockIndex: 1 }),
      event('contentBlockStart', { contentBlockIndex: 2, start: { toolUse: { toolUseId: 'tooluse_x', name: 'get_weather' } } }),
      event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }),
      event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '"Paris"}' } } }),
      event('contentBlockStop', { contentBlockIndex: 2 }),
      event('messageStop', { stopReason: 'tool_use' }),
    ];
    for (const each of sent) events.push(...decoder.decode(each));
    expect(decoder.complete).toBe(true);
    expect(decoder.done).toBe(false);
    events.push(...decoder.decode(event('metadata', { usage: { inputTokens: 5, outputTokens: 13, totalTokens: 18 }, metrics: { latencyMs: 100 } })));
    expect(decoder.done).toBe(true);
    expect(events).toEqual([
      { type: 'start', id: expect.any(String), created: expect.any(Number) },
      { type: 'reasoning', choice: 0, text: 'Let me think.' },
      { type: 'reasoning_signature', choice: 0, signature: 'sig-3' },
      { type: 'text', choice: 0, text: 'Checking.' },
      { type: 'tool_call', choice: 0, index: 0, id: 'tooluse_x', name: 'get_weather', arguments: '' },
      { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '{"city":' },
      { type: 'tool_call_arguments', choice: 0, index: 0, arguments: '"Paris"}' },
      { type: 'finish', choice: 0, reason: 'tool_calls' },
      { type: 'usage', usage: { promptTokens: 5, completionTokens: 13, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ]);
  });

  it('is not complete before messageStop, and refuses malformed events', () => {
    const decoder = bedrockProvider.chat(channel, NOVA).stream();
    decoder.decode(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }));
    expect(decoder.complete).toBe(false);
    expect(thrownBy(() => decoder.decode({ event: 'contentBlockDelta', data: 'not json', raw: '' }))).toBeInstanceOf(StreamEventError);
    expect(thrownBy(() => decoder.decode(event('contentBlockDelta', { delta: { text: 'no index' } })))).toBeInstanceOf(StreamEventError);
    expect(thrownBy(() => decoder.decode(event('contentBlockDelta', { contentBlockIndex: 4, delta: { toolUse: { input: '{}' } } })))).toBeInstanceOf(StreamEventError);
  });
});
