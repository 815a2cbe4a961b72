import type { TokenView } from '@modelgate/schemas/api';
import { keyBodyOfForm, keyFormOfToken, type KeyFormValues, keyUsageSnippet, listEntries, NEW_KEY_FORM } from '../web/src/pages/keys/key-form';
import { secondsToLocalInput } from '../web/src/lib/time';

const QUOTA_PER_UNIT = 500_000;
const NOW = 1_790_000_000;

function form(overrides: Partial<KeyFormValues>): KeyFormValues {
  return { ...NEW_KEY_FORM, name: 'laptop', ...overrides };
}

const token: TokenView = {
  id: 7,
  user_id: 1,
  name: 'ci',
  key: 'sk-abcd...wxyz',
  status: 1,
  created_at: NOW - 100,
  accessed_at: null,
  expired_time: NOW + 86_400,
  remain_quota: 1_250_000,
  used_quota: 10,
  unlimited_quota: false,
  model_limits_enabled: true,
  model_limits: 'gpt-4o-mini,claude-sonnet-4',
  allow_ips: '10.0.0.1\n192.168.0.0/16',
  group: 'vip',
};

describe('key form -> /api/token body', () => {
  it('a new key with only a name has no limits', () => {
    expect(keyBodyOfForm(form({}), QUOTA_PER_UNIT, NOW)).toEqual({
      ok: true,
      body: { name: 'laptop', unlimited_quota: true, expired_time: -1, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' },
    });
  });

  it('converts the budget in USD to quota, the expiry to unix seconds and the lists to the wire format', () => {
    const result = keyBodyOfForm(
      form({
        name: '  laptop ',
        unlimitedQuota: false,
        quotaUsd: '2.5',
        expires: true,
        expiresAt: secondsToLocalInput(NOW + 3600),
        modelLimitsEnabled: true,
        models: 'gpt-4o-mini, claude-sonnet-4\n\ngpt-4o-mini\n',
        allowIps: ' 10.0.0.1 \n\n192.168.0.0/16, ::1',
        group: ' vip ',
      }),
      QUOTA_PER_UNIT,
      NOW,
    );
    expect(result).toEqual({
      ok: true,
      body: {
        name: 'laptop',
        unlimited_quota: false,
        remain_quota: 1_250_000,
        expired_time: NOW + 3600 - ((NOW + 3600) % 60),
        model_limits_enabled: true,
        model_limits: 'gpt-4o-mini,claude-sonnet-4',
        allow_ips: '10.0.0.1\n192.168.0.0/16\n::1',
        group: 'vip',
      },
    });
  });

  it('keeps the model list while the allow-list is off', () => {
    const result = keyBodyOfForm(form({ models: 'gpt-4o-mini' }), QUOTA_PER_UNIT, NOW);
    expect(result.ok && result.body).toMatchObject({ model_limits_enabled: false, model_limits: 'gpt-4o-mini' });
  });

  it('says what to fix, by form field', () => {
    const result = keyBodyOfForm(
      { name: ' ', unlimitedQuota: false, quotaUsd: '-1', expires: true, expiresAt: secondsToLocalInput(NOW - 120), modelLimitsEnabled: true, models: ' , ', allowIps: '', group: 'not a group' },
      QUOTA_PER_UNIT,
      NOW,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors).toEqual({
      name: 'Enter a name',
      quotaUsd: 'Enter an amount in USD, 0 or more',
      expiresAt: 'Pick a time in the future',
      models: 'List at least one model',
      group: '1 to 32 letters, digits, _ or -',
    });
  });

  it('asks for an amount and a date when the boxes are left empty', () => {
    const result = keyBodyOfForm(form({ unlimitedQuota: false, quotaUsd: '', expires: true, expiresAt: '' }), QUOTA_PER_UNIT, NOW);
    expect(!result.ok && result.errors).toEqual({ quotaUsd: 'Enter an amount in USD, 0 or more', expiresAt: 'Pick a date and time' });
  });

  it('rejects a name longer than the API allows', () => {
    const result = keyBodyOfForm(form({ name: 'x'.repeat(51) }), QUOTA_PER_UNIT, NOW);
    expect(!result.ok && Object.keys(result.errors)).toEqual(['name']);
  });
});

describe('key -> form', () => {
  it('shows an existing key\'s limits as typed, and saves them back unchanged', () => {
    const values = keyFormOfToken(token, QUOTA_PER_UNIT);
    expect(values).toEqual({
      name: 'ci',
      unlimitedQuota: false,
      quotaUsd: '2.5',
      expires: true,
      expiresAt: secondsToLocalInput(token.expired_time),
      modelLimitsEnabled: true,
      models: 'gpt-4o-mini\nclaude-sonnet-4',
      allowIps: '10.0.0.1\n192.168.0.0/16',
      group: 'vip',
    });
    const result = keyBodyOfForm(values, QUOTA_PER_UNIT, NOW);
    expect(result.ok && result.body).toMatchObject({
      remain_quota: token.remain_quota,
      model_limits: token.model_limits,
      allow_ips: token.allow_ips,
      group: token.group,
    });
  });

  it('a key that never expires has no date', () => {
    const values = keyFormOfToken({ ...token, expired_time: -1, unlimited_quota: true }, QUOTA_PER_UNIT);
    expect(values).toMatchObject({ expires: false, expiresAt: '', unlimitedQuota: true });
  });
});

describe('helpers', () => {
  it('splits lists on commas and lines', () => {
    expect(listEntries(' a ,b\n\nc, ')).toEqual(['a', 'b', 'c']);
    expect(listEntries('')).toEqual([]);
  });

  it('the snippet sets the base URL and the key', () => {
    expect(keyUsageSnippet('https://gw.example/v1', 'sk-x')).toBe(
      'export OPENAI_BASE_URL=https://gw.example/v1\nexport OPENAI_API_KEY=sk-x\ncurl "$OPENAI_BASE_URL/models" -H "Authorization: Bearer $OPENAI_API_KEY"',
    );
  });
});
