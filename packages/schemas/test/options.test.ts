import { DEFAULT_MODEL_RATIO, normalizeOptionValue, OPTION_DEFINITIONS, parseOptions } from '../src';

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

  it('marks the Stripe secrets as secret', () => {
    const secrets = Object.entries(OPTION_DEFINITIONS).filter(([, d]) => d.secret).map(([k]) => k);
    expect(secrets.sort()).toEqual(['StripeApiSecret', 'StripeWebhookSecret']);
  });
});
