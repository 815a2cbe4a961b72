import { effectiveTokenStatus, parseModelMapping, TOKEN_STATUS } from '../src';

describe('parseModelMapping', () => {
  it('reads a JSON object of model names; blank text maps nothing', () => {
    expect(parseModelMapping('{"gpt-4o-mini": "gpt-4o-mini-2024-07-18"}')).toEqual(new Map([['gpt-4o-mini', 'gpt-4o-mini-2024-07-18']]));
    expect(parseModelMapping('')).toEqual(new Map());
    expect(parseModelMapping('  ')).toEqual(new Map());
    expect(parseModelMapping('{}')).toEqual(new Map());
  });

  it('keeps a model named like an Object.prototype member as an ordinary entry', () => {
    const mapping = parseModelMapping('{"__proto__": "a", "constructor": "b"}');
    expect([...mapping]).toEqual([['__proto__', 'a'], ['constructor', 'b']]);
    expect(mapping.get('toString')).toBeUndefined();
  });

  it.each([
    ['{broken', /must be JSON text/],
    ['[]', /must be a JSON object/],
    ['"gpt"', /must be a JSON object/],
    ['null', /must be a JSON object/],
    ['{"a": 1}', /entry "a" must map a model name to a non-empty model name/],
    ['{"a": ""}', /entry "a"/],
    ['{"": "b"}', /entry ""/],
  ])('rejects %j with a message saying why', (text, message) => {
    expect(() => parseModelMapping(text)).toThrow(message);
  });
});

describe('effectiveTokenStatus', () => {
  const now = Date.UTC(2026, 0, 1);
  const enabled = { status: TOKEN_STATUS.enabled, expiresAt: null, remainQuota: 10n, unlimitedQuota: false };

  it('keeps a status set by its owner', () => {
    expect(effectiveTokenStatus({ ...enabled, status: TOKEN_STATUS.disabled, remainQuota: 0n }, now)).toBe(TOKEN_STATUS.disabled);
    expect(effectiveTokenStatus(enabled, now)).toBe(TOKEN_STATUS.enabled);
  });

  it('shows an enabled key past its expiry as expired (Date or ms)', () => {
    expect(effectiveTokenStatus({ ...enabled, expiresAt: new Date(now) }, now)).toBe(TOKEN_STATUS.expired);
    expect(effectiveTokenStatus({ ...enabled, expiresAt: now + 1 }, now)).toBe(TOKEN_STATUS.enabled);
    expect(effectiveTokenStatus({ ...enabled, expiresAt: now - 1, remainQuota: 0 }, now)).toBe(TOKEN_STATUS.expired);
  });

  it('shows an enabled key without quota as exhausted, unless it is unlimited', () => {
    expect(effectiveTokenStatus({ ...enabled, remainQuota: 0n }, now)).toBe(TOKEN_STATUS.exhausted);
    expect(effectiveTokenStatus({ ...enabled, remainQuota: 0 }, now)).toBe(TOKEN_STATUS.exhausted);
    expect(effectiveTokenStatus({ ...enabled, remainQuota: 0n, unlimitedQuota: true }, now)).toBe(TOKEN_STATUS.enabled);
  });
});
