import {
  ANTHROPIC_VERSION,
  CHANNEL_TYPE,
  CHANNEL_TYPE_NUMBERS,
  CHANNEL_TYPES,
  channelAddressChanges,
  channelBaseUrl,
  checkChannelSettings,
  isChannelType,
} from '../src';

describe('CHANNEL_TYPES', () => {
  it.each(CHANNEL_TYPE_NUMBERS)('type %i has a default https base URL, a label and at least one surface', (type) => {
    const facts = CHANNEL_TYPES[type];
    expect(facts.type).toBe(type);
    expect(facts.label).not.toBe('');
    expect(new URL(facts.defaultBaseUrl).protocol).toBe('https:');
    expect(facts.defaultBaseUrl).not.toMatch(/\/$/);
    expect(facts.surfaces.length).toBeGreaterThan(0);
  });

  it.each([
    [CHANNEL_TYPE.openai, { authorization: 'Bearer sk-k' }],
    [CHANNEL_TYPE.anthropic, { 'x-api-key': 'sk-k', 'anthropic-version': ANTHROPIC_VERSION }],
    [CHANNEL_TYPE.gemini, { 'x-goog-api-key': 'sk-k' }],
  ])('type %i authenticates with its own headers', (type, headers) => {
    expect(CHANNEL_TYPES[type].authHeaders('sk-k')).toEqual(headers);
  });

  it.each([
    [CHANNEL_TYPE.openai, '/v1/chat/completions', { model: 'm/1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }],
    [CHANNEL_TYPE.anthropic, '/v1/messages', { model: 'm/1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }],
    [
      CHANNEL_TYPE.gemini,
      '/v1beta/models/m%2F1:generateContent',
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 1 } },
    ],
  ])('type %i tests a channel with one small chat request in its own dialect', (type, path, body) => {
    expect(CHANNEL_TYPES[type].testRequest('m/1')).toEqual({ path, body });
  });

  it('knows types 1, 14 and 24 and nothing else', () => {
    expect(CHANNEL_TYPE_NUMBERS).toEqual([1, 14, 24]);
    expect([0, 1, 2, 14, 24, 25].filter(isChannelType)).toEqual([1, 14, 24]);
    expect(isChannelType(Number('constructor'))).toBe(false);
  });
});

describe('channelBaseUrl', () => {
  it("uses the channel's own base URL, or its type's default when it has none", () => {
    expect(channelBaseUrl({ type: CHANNEL_TYPE.openai, baseUrl: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.openai, baseUrl: '' })).toBe('https://api.openai.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.anthropic, baseUrl: '' })).toBe('https://api.anthropic.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.gemini, baseUrl: ' ' })).toBe('https://generativelanguage.googleapis.com');
  });
});

describe('checkChannelSettings', () => {
  it.each([
    [CHANNEL_TYPE.openai, {}],
    [CHANNEL_TYPE.openai, { responses: 'native' }],
    [CHANNEL_TYPE.openai, { responses: 'chat' }],
    [CHANNEL_TYPE.anthropic, {}],
    [CHANNEL_TYPE.gemini, {}],
  ])('type %i accepts %j', (type, settings) => {
    expect(checkChannelSettings(type, settings)).toEqual({ ok: true, settings });
  });

  it.each([
    [CHANNEL_TYPE.openai, { responses: 'both' }, 'settings.responses', /must be "native" or "chat"/],
    [CHANNEL_TYPE.openai, { responses: null }, 'settings.responses', /must be "native" or "chat"/],
    [CHANNEL_TYPE.openai, { stream: true }, 'settings.stream', /channel type 1 \(OpenAI-compatible\) has no setting "stream"/],
    [CHANNEL_TYPE.anthropic, { responses: 'chat' }, 'settings.responses', /channel type 14 \(Anthropic\) has no setting "responses"/],
    [CHANNEL_TYPE.gemini, { responses: 'native' }, 'settings.responses', /has no setting "responses"/],
    [CHANNEL_TYPE.openai, { constructor: 'chat' }, 'settings.constructor', /has no setting "constructor"/],
    [CHANNEL_TYPE.openai, ['chat'], 'settings', /must be a JSON object/],
    [CHANNEL_TYPE.openai, '{"responses":"chat"}', 'settings', /must be a JSON object/],
    [CHANNEL_TYPE.openai, null, 'settings', /must be a JSON object/],
  ])('type %i refuses %j, naming %s', (type, settings, field, message) => {
    const checked = checkChannelSettings(type, settings);
    expect(checked).toEqual({ ok: false, field, message: expect.stringMatching(message) });
  });
});

describe('channelAddressChanges', () => {
  const stored = { type: CHANNEL_TYPE.openai, baseUrl: 'https://proxy.example' };

  it.each([
    [{}, false],
    [{ type: CHANNEL_TYPE.openai, baseUrl: 'https://proxy.example' }, false],
    [{ baseUrl: 'https://elsewhere.example' }, true],
    [{ baseUrl: '' }, true],
    [{ type: CHANNEL_TYPE.anthropic }, true],
    [{ type: CHANNEL_TYPE.gemini, baseUrl: 'https://proxy.example' }, true],
  ])('edit %j of an OpenAI channel at a proxy moves its key: %s', (edit, moves) => {
    expect(channelAddressChanges(stored, edit)).toBe(moves);
  });

  it("takes '' as the type's default address", () => {
    expect(channelAddressChanges({ type: CHANNEL_TYPE.anthropic, baseUrl: '' }, { baseUrl: 'https://api.anthropic.com' })).toBe(false);
    expect(channelAddressChanges({ type: CHANNEL_TYPE.anthropic, baseUrl: 'https://api.anthropic.com' }, { baseUrl: '' })).toBe(false);
  });
});
