import type { TokenView } from '@modelgate/schemas/api';
import { adminLimitErrors, keyBodyOfForm, keyFormOfToken, type KeyFormValues, keyUpdateFields, keyUsageSnippet, listEntries, NEW_KEY_FORM } from '../web/src/pages/keys/key-form';
import { budgetUse, limitsSummary } from '../web/src/pages/keys/key-limits';
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
  rpm_limit: 60,
  tpm_limit: 0,
  max_concurrency: 4,
  budget_usd: 10,
  budget_period: 'week',
  budget_used_quota: 1_600_000,
  limits_set_by_admin: false,
};

describe('key form -> /api/token body', () => {
  it('a new key with only a name has no limits', () => {
    expect(keyBodyOfForm(form({}), QUOTA_PER_UNIT, NOW)).toEqual({
      ok: true,
      body: {
        name: 'laptop',
        unlimited_quota: true,
        expired_time: -1,
        model_limits_enabled: false,
        model_limits: '',
        allow_ips: '',
        group: '',
        rpm_limit: 0,
        tpm_limit: 0,
        max_concurrency: 0,
        budget_usd: null,
        budget_period: 'month',
      },
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
        rpm_limit: 0,
        tpm_limit: 0,
        max_concurrency: 0,
        budget_usd: null,
        budget_period: 'month',
      },
    });
  });

  it('keeps the model list while the allow-list is off', () => {
    const result = keyBodyOfForm(form({ models: 'gpt-4o-mini' }), QUOTA_PER_UNIT, NOW);
    expect(result.ok && result.body).toMatchObject({ model_limits_enabled: false, model_limits: 'gpt-4o-mini' });
  });

  it('says what to fix, by form field', () => {
    const result = keyBodyOfForm(
      {
        ...NEW_KEY_FORM,
        name: ' ',
        unlimitedQuota: false,
        quotaUsd: '-1',
        expires: true,
        expiresAt: secondsToLocalInput(NOW - 120),
        modelLimitsEnabled: true,
        models: ' , ',
        group: 'not a group',
        rpmLimit: '1.5',
        tpmLimit: '-1',
        maxConcurrency: '100001',
        budgetUsd: 'ten',
      },
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
      rpmLimit: 'Enter a whole number, 0 for none',
      tpmLimit: 'Enter a whole number, 0 for none',
      maxConcurrency: 'Too big: expected number to be <=100000',
      budgetUsd: 'Enter an amount in USD, or leave it empty for none',
    });
  });

  it('sends the rate limits and the budget; empty means none', () => {
    const limited = keyBodyOfForm(form({ rpmLimit: ' 60 ', tpmLimit: '', maxConcurrency: '2', budgetUsd: '12.5', budgetPeriod: 'day' }), QUOTA_PER_UNIT, NOW);
    expect(limited.ok && limited.body).toMatchObject({ rpm_limit: 60, tpm_limit: 0, max_concurrency: 2, budget_usd: 12.5, budget_period: 'day' });
    const tooPrecise = keyBodyOfForm(form({ budgetUsd: '0.00001' }), QUOTA_PER_UNIT, NOW);
    expect(!tooPrecise.ok && tooPrecise.errors).toEqual({ budgetUsd: 'at most 4 decimal places' });
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
      rpmLimit: '60',
      tpmLimit: '0',
      maxConcurrency: '4',
      budgetUsd: '10',
      budgetPeriod: 'week',
    });
    const result = keyBodyOfForm(values, QUOTA_PER_UNIT, NOW);
    expect(result.ok && result.body).toMatchObject({
      remain_quota: token.remain_quota,
      model_limits: token.model_limits,
      allow_ips: token.allow_ips,
      group: token.group,
      rpm_limit: 60,
      tpm_limit: 0,
      max_concurrency: 4,
      budget_usd: 10,
      budget_period: 'week',
    });
  });

  it('a key that never expires has no date, and one without a budget an empty budget', () => {
    const values = keyFormOfToken({ ...token, expired_time: -1, unlimited_quota: true, budget_usd: null }, QUOTA_PER_UNIT);
    expect(values).toMatchObject({ expires: false, expiresAt: '', unlimitedQuota: true, budgetUsd: '' });
  });
});

describe('editing limits', () => {
  const saved = (overrides: Partial<KeyFormValues>) => {
    const result = keyBodyOfForm({ ...keyFormOfToken(token, QUOTA_PER_UNIT), ...overrides }, QUOTA_PER_UNIT, NOW);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    return result.body;
  };

  it('an edit sends only the limits that changed', () => {
    const fields = keyUpdateFields(saved({ name: 'renamed', rpmLimit: '30' }), token);
    expect(fields).toMatchObject({ name: 'renamed', rpm_limit: 30 });
    for (const field of ['tpm_limit', 'max_concurrency', 'budget_usd', 'budget_period']) expect(fields).not.toHaveProperty(field);
    expect(keyUpdateFields(saved({ budgetUsd: '', budgetPeriod: 'month' }), token)).toMatchObject({ budget_usd: null, budget_period: 'month' });
  });

  it("under an admin's limits, the owner may lower them but not raise, remove or change the period", () => {
    const locked = { ...token, limits_set_by_admin: true };
    expect(adminLimitErrors(saved({ rpmLimit: '30', tpmLimit: '1000', maxConcurrency: '4', budgetUsd: '2.5' }), locked)).toEqual({});
    expect(adminLimitErrors(saved({ rpmLimit: '61', maxConcurrency: '0', budgetUsd: '', budgetPeriod: 'day' }), locked)).toEqual({
      rpmLimit: 'An admin set this limit: enter 1 to 60',
      maxConcurrency: 'An admin set this limit: enter 1 to 4',
      budgetUsd: 'An admin set this budget: enter 0 to 10',
      budgetPeriod: 'An admin set the budget period',
    });
    expect(adminLimitErrors(saved({ budgetUsd: '10.01' }), locked)).toEqual({ budgetUsd: 'An admin set this budget: enter 0 to 10' });
  });
});

describe('the key list', () => {
  it('sums up the rate limits', () => {
    expect(limitsSummary(token)).toBe('60 req/min · 4 at once');
    expect(limitsSummary({ rpm_limit: 0, tpm_limit: 200_000, max_concurrency: 0 })).toBe('200,000 tokens/min');
    expect(limitsSummary({ rpm_limit: 0, tpm_limit: 0, max_concurrency: 0 })).toBe('No rate limits');
  });

  it("shows the budget's use in the current period", () => {
    expect(budgetUse(token, QUOTA_PER_UNIT)).toEqual({ text: 'USD 3.20 of 10.00 this week', fraction: 0.32, exhausted: false });
    expect(budgetUse({ budget_usd: 2.5, budget_period: 'day', budget_used_quota: 1_500_000 }, QUOTA_PER_UNIT)).toEqual({
      text: 'USD 3.00 of 2.50 today',
      fraction: 1,
      exhausted: true,
    });
    expect(budgetUse({ budget_usd: 0.1234, budget_period: 'month', budget_used_quota: 0 }, QUOTA_PER_UNIT)?.text).toBe('USD 0.00 of 0.1234 this month');
    expect(budgetUse({ ...token, budget_usd: null }, QUOTA_PER_UNIT)).toBeUndefined();
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
