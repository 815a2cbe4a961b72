import {
  DEFAULT_CACHE_CREATION_RATIO,
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_RATIO,
  normalizeOptionValue,
  OPTION_DEFINITIONS,
  parseOptions,
  ratiosFromUsdPer1M,
  ratiosOf,
  usdPer1M,
} from '../src';

describe('options', () => {
  it('falls back to defaults for missing and corrupt rows', () => {
    const values = parseOptions([
      { key: 'RetryTimes', value: '5' },
      { key: 'QuotaPerUnit', value: 'not a number' },
      { key: 'Unknown', value: 'x' },
    ]);
    expect(values.RetryTimes).toBe(5);
    expect(values.QuotaPerUnit).toBe(500000);
    expect(values.ModelRatio).toEqual(new Map(Object.entries(DEFAULT_MODEL_RATIO)));
    expect(values.RegisterEnabled).toBe(true);
  });

  it('stores JSON numbers, booleans and objects in their text form', () => {
    expect(normalizeOptionValue('RetryTimes', 3)).toBe('3');
    expect(normalizeOptionValue('RegisterEnabled', false)).toBe('false');
    expect(normalizeOptionValue('GroupRatio', { default: 1, vip: 0.5 })).toBe('{"default":1,"vip":0.5}');
    expect(normalizeOptionValue('ModelRatio', '{"m":2}')).toBe('{"m":2}');
  });

  it('rejects invalid values with a message naming the key', () => {
    expect(() => normalizeOptionValue('RetryTimes', -1)).toThrow(/RetryTimes/);
    expect(() => normalizeOptionValue('ModelRatio', '{not json')).toThrow(/ModelRatio: must be JSON text/);
    expect(() => normalizeOptionValue('GroupRatio', { vip: -2 })).toThrow(/GroupRatio/);
  });

  it('stores numbers as normalised decimal text, from decimal text or a JSON number', () => {
    expect(normalizeOptionValue('QuotaPerUnit', '007')).toBe('7');
    expect(normalizeOptionValue('QuotaPerUnit', 250000)).toBe('250000');
    expect(normalizeOptionValue('StripeUnitPrice', '0.50')).toBe('0.5');
    expect(normalizeOptionValue('StripeUnitPrice', 2)).toBe('2');
  });

  it.each(['', ' 5 ', '1e3', '0x10', '+5', '5.0', '-1', 'null'])('rejects the number text %j', (text) => {
    expect(() => normalizeOptionValue('QuotaForNewUser', text)).toThrow(/QuotaForNewUser: must be a decimal integer/);
  });

  it.each([2.5, Number.MAX_SAFE_INTEGER + 1, null, true, { n: 1 }])('rejects %j for an integer option', (value) => {
    expect(() => normalizeOptionValue('QuotaForNewUser', value)).toThrow(/QuotaForNewUser/);
  });

  it('rejects unit prices that would not read back the same', () => {
    for (const value of ['1e3', '.5', '1.', 1e-7, -1, 'NaN']) {
      expect(() => normalizeOptionValue('StripeUnitPrice', value)).toThrow(/StripeUnitPrice/);
    }
  });

  it('accepts booleans as JSON or text, and nothing else', () => {
    expect(normalizeOptionValue('RegisterEnabled', true)).toBe('true');
    expect(normalizeOptionValue('RegisterEnabled', 'false')).toBe('false');
    for (const value of ['yes', 1, 'TRUE', null]) {
      expect(() => normalizeOptionValue('RegisterEnabled', value)).toThrow(/RegisterEnabled: must be true or false/);
    }
  });

  it('requires a string for the Stripe settings', () => {
    expect(normalizeOptionValue('StripePriceId', 'price_123')).toBe('price_123');
    for (const key of ['StripeApiSecret', 'StripeWebhookSecret', 'StripePriceId'] as const) {
      expect(() => normalizeOptionValue(key, null)).toThrow(new RegExp(`${key}: must be a string`));
      expect(() => normalizeOptionValue(key, 42)).toThrow(new RegExp(`${key}: must be a string`));
    }
  });

  it('reads stored text that is not normalised as corrupt, falling back to the default', () => {
    const values = parseOptions([
      { key: 'RetryTimes', value: ' 3 ' },
      { key: 'QuotaForNewUser', value: '1e3' },
    ]);
    expect(values.RetryTimes).toBe(2);
    expect(values.QuotaForNewUser).toBe(0);
  });

  it('reads ratio maps into Maps: a name like an Object.prototype member is an entry or absent, never inherited', () => {
    const values = parseOptions([{ key: 'ModelRatio', value: '{"__proto__": 3, "constructor": 2, "m": 1}' }]);
    expect([...values.ModelRatio]).toEqual([['__proto__', 3], ['constructor', 2], ['m', 1]]);
    expect(values.ModelRatio.get('toString')).toBeUndefined();
    expect(parseOptions([]).GroupRatio.get('constructor')).toBeUndefined();
  });

  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'])('refuses %j as a ratio map key', (name) => {
    expect(() => normalizeOptionValue('ModelRatio', `{"m": 1, "${name}": 2}`)).toThrow(new RegExp(`ModelRatio: key "${name}" must not be`));
    expect(() => normalizeOptionValue('GroupRatio', JSON.parse(`{"${name}": 1}`))).toThrow(/GroupRatio: key/);
    expect(normalizeOptionValue('CompletionRatio', { Constructor: 1, [`my${name}model`]: 2 })).toBe(`{"Constructor":1,"my${name}model":2}`);
  });

  it('marks the Stripe, SMTP and OIDC secrets as secret, and nothing else', () => {
    const secrets = Object.entries(OPTION_DEFINITIONS).filter(([, d]) => d.secret).map(([k]) => k);
    expect(secrets.sort()).toEqual(['OIDCClientSecret', 'SMTPToken', 'StripeApiSecret', 'StripeWebhookSecret']);
  });

  it.each(['CacheRatio', 'CacheCreationRatio'] as const)('reads and validates %s like the other ratio maps', (key) => {
    expect(normalizeOptionValue(key, { 'my-model': 0.1 })).toBe('{"my-model":0.1}');
    expect(normalizeOptionValue(key, '{"my-model": 1.25}')).toBe('{"my-model":1.25}');
    expect(() => normalizeOptionValue(key, '{broken')).toThrow(new RegExp(`${key}: must be JSON text`));
    expect(() => normalizeOptionValue(key, { m: -0.1 })).toThrow(new RegExp(`${key}: entry "m"`));
    expect(() => normalizeOptionValue(key, { constructor: 1 })).toThrow(new RegExp(`${key}: key "constructor"`));
    expect(parseOptions([{ key, value: '{"m": 0.5}' }])[key]).toEqual(new Map([['m', 0.5]]));
  });

  it('reads ModelRatioTiers sorted by threshold and refuses malformed tiers (docs/api.md 2.11)', () => {
    const high = { above_prompt_tokens: 500_000, model_ratio: 4, completion_ratio: 4 };
    const low = { above_prompt_tokens: 200_000, model_ratio: 3, completion_ratio: 3.75 };
    expect(normalizeOptionValue('ModelRatioTiers', { m: [high, low] })).toBe(JSON.stringify({ m: [low, high] }));
    expect(parseOptions([{ key: 'ModelRatioTiers', value: JSON.stringify({ m: [high, low] }) }]).ModelRatioTiers).toEqual(new Map([['m', [low, high]]]));
    expect(() => normalizeOptionValue('ModelRatioTiers', { m: [low, { ...high, above_prompt_tokens: 200_000 }] })).toThrow(/ModelRatioTiers: entry "m" names a threshold twice/);
    expect(() => normalizeOptionValue('ModelRatioTiers', { m: [{ ...low, model_ratio: -1 }] })).toThrow(/ModelRatioTiers: entry "m" must map/);
    expect(() => normalizeOptionValue('ModelRatioTiers', { m: [{ ...low, extra: 1 }] })).toThrow(/ModelRatioTiers: entry "m" must map/);
    expect(() => normalizeOptionValue('ModelRatioTiers', { m: [] })).toThrow(/ModelRatioTiers: entry "m" must map/);
    expect(() => normalizeOptionValue('ModelRatioTiers', { constructor: [low] })).toThrow(/ModelRatioTiers: key "constructor"/);
  });

  it('reads GroupRateLimit with absent limits as 0 and refuses malformed entries (docs/api.md 3.9.3)', () => {
    expect(normalizeOptionValue('GroupRateLimit', { vip: { rpm: 600 } })).toBe('{"vip":{"rpm":600,"tpm":0,"concurrency":0}}');
    expect(parseOptions([{ key: 'GroupRateLimit', value: '{"default": {"rpm": 60, "tpm": 100000, "concurrency": 4}}' }]).GroupRateLimit).toEqual(
      new Map([['default', { rpm: 60, tpm: 100_000, concurrency: 4 }]]),
    );
    expect(parseOptions([]).GroupRateLimit).toEqual(new Map());
    expect(() => normalizeOptionValue('GroupRateLimit', { vip: { rpm: -1 } })).toThrow(/GroupRateLimit: entry "vip" must map/);
    expect(() => normalizeOptionValue('GroupRateLimit', { vip: { rpm: 1.5 } })).toThrow(/GroupRateLimit: entry "vip" must map/);
    expect(() => normalizeOptionValue('GroupRateLimit', { vip: { rps: 1 } })).toThrow(/GroupRateLimit: entry "vip" must map/);
    expect(() => normalizeOptionValue('GroupRateLimit', { vip: 5 })).toThrow(/GroupRateLimit: entry "vip" must map/);
    expect(() => normalizeOptionValue('GroupRateLimit', { constructor: { rpm: 1 } })).toThrow(/GroupRateLimit: key "constructor"/);
  });

  it('reads SMTPPort as a port number', () => {
    expect(parseOptions([]).SMTPPort).toBe(587);
    expect(() => normalizeOptionValue('SMTPPort', '0')).toThrow(/SMTPPort: must be from 1 to 65535/);
  });
});

describe('default prices (docs/api.md 2.11)', () => {
  const defaults = parseOptions([]);

  it.each([
    'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'o3', 'o4-mini',
    'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002',
    'claude-opus-4-1', 'claude-opus-4-5', 'claude-sonnet-4-5', 'claude-sonnet-4-0', 'claude-haiku-4-5', 'claude-3-5-haiku-latest',
    'claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001',
    'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash', 'gemini-embedding-001', 'text-embedding-004',
    'gpt-3.5-turbo-instruct', 'davinci-002', 'babbage-002', 'gemini-2.5-flash-preview-tts', 'gemini-2.5-pro-preview-tts',
  ])('a fresh install prices %s', (model) => {
    expect(defaults.ModelRatio.get(model)).toBeGreaterThan(0);
  });

  it.each([
    // [model, USD per 1M input, output, cached input]
    ['gpt-4.1', 2, 8, 0.5],
    ['gpt-5-nano', 0.05, 0.4, 0.005],
    ['o4-mini', 1.1, 4.4, 0.275],
    ['claude-sonnet-4-5', 3, 15, 0.3],
    ['claude-opus-4-1', 15, 75, 1.5],
    ['gemini-2.5-flash-lite', 0.1, 0.4, 0.01],
  ])("prices %s at the provider's USD %s / %s / %s per 1M input, output and cached input tokens", (model, input, output, cached) => {
    const price = ratiosOf(defaults, model, 'default');
    expect(price && usdPer1M(price)).toMatchObject({ input, output, cachedInput: cached });
  });

  it('prices the cache writes of every shipped Anthropic model at 1.25 x input, and no other model', () => {
    const anthropic = Object.keys(DEFAULT_MODEL_RATIO).filter((model) => model.startsWith('claude-'));
    expect(anthropic.length).toBeGreaterThan(0);
    expect(DEFAULT_CACHE_CREATION_RATIO).toEqual(Object.fromEntries(anthropic.map((model) => [model, 1.25])));
  });

  it('has a ModelRatio for every model another default map names', () => {
    for (const ratios of [DEFAULT_COMPLETION_RATIO, DEFAULT_CACHE_RATIO, DEFAULT_CACHE_CREATION_RATIO]) {
      for (const model of Object.keys(ratios)) expect([model, DEFAULT_MODEL_RATIO[model]]).toEqual([model, expect.any(Number)]);
    }
  });

  it('saves every shipped price, read in USD per 1M, as ratios that read back as the same prices', () => {
    for (const model of Object.keys(DEFAULT_MODEL_RATIO)) {
      const prices = usdPer1M(ratiosOf(defaults, model, 'default')!);
      expect([model, usdPer1M({ ...ratiosFromUsdPer1M(prices), groupRatio: 1 })]).toEqual([model, prices]);
    }
  });
});
