import {
  codesFileName,
  codesFileText,
  redemptionBodyOf,
  redemptionFormSchema,
  redemptionStatusBadge,
  valueHint,
} from '../web/src/pages/admin/redemptions/redemption-form';
import { secondsToLocalInput } from '../web/src/lib/time';

const QUOTA_PER_UNIT = 500_000;
const NOW = 1_800_000_000;
const schema = redemptionFormSchema(QUOTA_PER_UNIT, () => NOW);
const filled = { name: ' Spring promo ', value_usd: 2.5, count: 10, expires: false, expires_at: '' };

describe('redemptionFormSchema', () => {
  it('turns USD into quota and an unticked expiry into never', () => {
    expect(redemptionBodyOf(schema.parse(filled), QUOTA_PER_UNIT)).toEqual({ name: 'Spring promo', quota: 1_250_000, count: 10, expired_time: -1 });
  });

  it('sends a ticked expiry as unix seconds', () => {
    const expiresAt = secondsToLocalInput(NOW + 3600);
    const body = redemptionBodyOf(schema.parse({ ...filled, expires: true, expires_at: expiresAt }), QUOTA_PER_UNIT);
    expect(body.expired_time).toBe(NOW + 3600);
  });

  it.each([
    ['an empty name', { name: '  ' }, 'name', 'Enter a name'],
    ['no value', { value_usd: Number.NaN }, 'value_usd', 'Enter an amount in USD, like 5 or 2.50'],
    ['a value below one quota', { value_usd: 0.0000005 }, 'value_usd', 'At least $0.000002 (1 quota)'],
    ['no codes', { count: 0 }, 'count', 'At least 1'],
    ['too many codes', { count: 101 }, 'count', 'At most 100'],
    ['a fractional count', { count: 1.5 }, 'count', 'Enter a whole number'],
    ['an expiry without a time', { expires: true, expires_at: '' }, 'expires_at', 'Pick a date and time'],
    ['an expiry in the past', { expires: true, expires_at: secondsToLocalInput(NOW - 60) }, 'expires_at', 'Pick a time in the future'],
  ])('refuses %s', (_label, change, field, message) => {
    const issue = schema.safeParse({ ...filled, ...change }).error?.issues[0];
    expect({ path: issue?.path, message: issue?.message }).toEqual({ path: [field], message });
  });

  it('says what a value is worth in quota', () => {
    expect(valueHint(2.5, QUOTA_PER_UNIT)).toBe('Each code adds 1,250,000 quota ($2.50) to the balance of whoever redeems it');
    expect(valueHint(Number.NaN, QUOTA_PER_UNIT)).toBe('An amount in USD, like 5 or 2.50 (500,000 quota per USD 1)');
  });
});

describe('redemption helpers', () => {
  it('shows used, disabled, expired and enabled codes as badges', () => {
    expect(redemptionStatusBadge({ status: 3, expired_time: -1 }, NOW)).toEqual({ label: 'Used', className: 'badge' });
    expect(redemptionStatusBadge({ status: 2, expired_time: -1 }, NOW)).toEqual({ label: 'Disabled', className: 'badge off' });
    expect(redemptionStatusBadge({ status: 1, expired_time: NOW }, NOW)).toEqual({ label: 'Expired', className: 'badge off' });
    expect(redemptionStatusBadge({ status: 1, expired_time: NOW + 1 }, NOW)).toEqual({ label: 'Enabled', className: 'badge ok' });
    expect(redemptionStatusBadge({ status: 1, expired_time: -1 }, NOW)).toEqual({ label: 'Enabled', className: 'badge ok' });
  });

  it('writes one code a line and names the file after the batch', () => {
    expect(codesFileText(['AAA', 'BBB'])).toBe('AAA\nBBB\n');
    expect(codesFileName(' Spring promo / 2026! ')).toBe('redemption-codes-spring-promo-2026.txt');
    expect(codesFileName('!!!')).toBe('redemption-codes.txt');
  });
});
