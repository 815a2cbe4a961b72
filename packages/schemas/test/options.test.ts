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
    expect(values.ModelRatio).toEqual(DEFAULT_MODEL_RATIO);
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

  it('marks the Stripe secrets as secret', () => {
    const secrets = Object.entries(OPTION_DEFINITIONS).filter(([, d]) => d.secret).map(([k]) => k);
    expect(secrets.sort()).toEqual(['StripeApiSecret', 'StripeWebhookSecret']);
  });
});
