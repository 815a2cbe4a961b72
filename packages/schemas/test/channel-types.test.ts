import {
  CHANNEL_TYPE,
  CHANNEL_TYPE_NUMBERS,
  CHANNEL_TYPES,
  channelAddressChanges,
  channelBaseUrl,
  checkChannelSettings,
  isChannelType,
} from '../src';

describe('CHANNEL_TYPES', () => {
  it.each(CHANNEL_TYPE_NUMBERS)('type %i has a label, a key hint, at least one surface and a default https base URL unless it needs one entered', (type) => {
    const facts = CHANNEL_TYPES[type];
    expect(facts.type).toBe(type);
    expect(facts.label).not.toBe('');
    expect(facts.keyHint).not.toBe('');
    expect(facts.surfaces.length).toBeGreaterThan(0);
    if (type === CHANNEL_TYPE.azure) {
      expect(facts.defaultBaseUrl).toBe('');
      return;
    }
    const url = channelBaseUrl({ type, baseUrl: '', settings: { region: 'us-east-1' } });
    expect(new URL(url).protocol).toBe('https:');
    expect(url).not.toMatch(/\/$/);
  });

  it('knows types 1, 3, 14, 24, 33 and 41 and nothing else', () => {
    expect(CHANNEL_TYPE_NUMBERS).toEqual([1, 3, 14, 24, 33, 41]);
    expect([0, 1, 2, 3, 14, 24, 25, 33, 41, 42].filter(isChannelType)).toEqual([1, 3, 14, 24, 33, 41]);
    expect(isChannelType(Number('constructor'))).toBe(false);
  });

  it.each([
    ['AKIDEXAMPLE|secret', undefined],
    ['AKIDEXAMPLE|secret|session-token', undefined],
    ['ABSKbedrockapikey', undefined],
    ['AKIDEXAMPLE|', 'must be ACCESS_KEY_ID|SECRET_ACCESS_KEY or ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN'],
    ['a|b|c|d', 'must be ACCESS_KEY_ID|SECRET_ACCESS_KEY or ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN'],
    [' key', 'must be a Bedrock API key or ACCESS_KEY_ID|SECRET_ACCESS_KEY[|SESSION_TOKEN]'],
  ])('checks a Bedrock key %j', (key, problem) => {
    expect(CHANNEL_TYPES[CHANNEL_TYPE.bedrock].checkKey?.(key)).toBe(problem);
  });

  it('takes a Vertex AI key only as a service account key file', () => {
    const check = CHANNEL_TYPES[CHANNEL_TYPE.vertex].checkKey!;
    const file = { type: 'service_account', client_email: 'a@p.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----', token_uri: 'https://oauth2.googleapis.com/token' };
    expect(check(JSON.stringify(file))).toBeUndefined();
    expect(check('AIza-not-a-file')).toBe('must be the service account key file (JSON)');
    expect(check('[]')).toBe('must be the service account key file (a JSON object)');
    expect(check(JSON.stringify({ ...file, private_key: '', token_uri: undefined }))).toBe('the key file lacks private_key, token_uri');
    expect(check(JSON.stringify({ ...file, token_uri: 'file:///etc/passwd' }))).toBe('token_uri must be an https URL (http only on a loopback address)');
    expect(check(JSON.stringify({ ...file, token_uri: 'http://tokens.example/token' }))).toBe('token_uri must be an https URL (http only on a loopback address)');
    expect(check(JSON.stringify({ ...file, token_uri: 'http://127.0.0.1:8080/token' }))).toBeUndefined();
  });
});

describe('channelBaseUrl', () => {
  it("uses the channel's own base URL, or its type's default when it has none", () => {
    expect(channelBaseUrl({ type: CHANNEL_TYPE.openai, baseUrl: 'http://127.0.0.1:9' })).toBe('http://127.0.0.1:9');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.openai, baseUrl: '' })).toBe('https://api.openai.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.anthropic, baseUrl: '' })).toBe('https://api.anthropic.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.gemini, baseUrl: ' ' })).toBe('https://generativelanguage.googleapis.com');
  });

  it("fills a cloud type's default with the channel's region", () => {
    expect(channelBaseUrl({ type: CHANNEL_TYPE.bedrock, baseUrl: '', settings: { region: 'eu-west-1' } })).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.vertex, baseUrl: '', settings: {} })).toBe('https://aiplatform.googleapis.com');
    expect(channelBaseUrl({ type: CHANNEL_TYPE.vertex, baseUrl: '', settings: { region: 'us-east5' } })).toBe('https://us-east5-aiplatform.googleapis.com');
  });
});

describe('checkChannelSettings', () => {
  it.each([
    [CHANNEL_TYPE.openai, {}],
    [CHANNEL_TYPE.openai, { responses: 'native' }],
    [CHANNEL_TYPE.openai, { responses: 'chat' }],
    [CHANNEL_TYPE.anthropic, {}],
    [CHANNEL_TYPE.gemini, {}],
    [CHANNEL_TYPE.azure, {}],
    [CHANNEL_TYPE.azure, { api_version: '2025-04-01-preview' }],
    [CHANNEL_TYPE.bedrock, { region: 'us-east-1' }],
    [CHANNEL_TYPE.vertex, {}],
    [CHANNEL_TYPE.vertex, { region: 'europe-west4', project_id: 'my-project-42' }],
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
    [CHANNEL_TYPE.bedrock, {}, 'settings.region', /need a region/],
    [CHANNEL_TYPE.bedrock, { region: 'evil.example/x' }, 'settings.region', /must be a region name/],
    [CHANNEL_TYPE.azure, { api_version: 'latest' }, 'settings.api_version', /must be an API version/],
    [CHANNEL_TYPE.vertex, { project_id: 'A' }, 'settings.project_id', /must be a Google Cloud project id/],
    [CHANNEL_TYPE.azure, { region: 'us-east-1' }, 'settings.region', /channel type 3 \(Azure OpenAI\) has no setting "region"/],
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
