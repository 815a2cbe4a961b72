import { MAX_TOPUP_UNITS } from '@modelgate/schemas/api';
import { affTransferFormSchema, invitationLink, redeemFormSchema, topUpFormSchema, topUpStatusBadge } from '../web/src/pages/wallet/wallet-forms';

describe('topUpFormSchema', () => {
  const schema = topUpFormSchema(5);
  it('takes whole units from the minimum to the maximum', () => {
    expect(schema.parse({ amount: 5 })).toEqual({ amount: 5 });
    expect(schema.parse({ amount: MAX_TOPUP_UNITS })).toEqual({ amount: MAX_TOPUP_UNITS });
  });
  it.each([
    [4, 'At least 5'],
    [MAX_TOPUP_UNITS + 1, 'At most 100,000'],
    [5.5, 'Enter a whole number of units'],
    [Number.NaN, 'Enter a whole number of units'],
  ])('refuses %p: %s', (amount, message) => {
    const result = schema.safeParse({ amount });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(message);
  });
});

describe('affTransferFormSchema', () => {
  const schema = affTransferFormSchema(500_000, 1_200_000);
  it('takes from one unit of quota up to the earned quota', () => {
    expect(schema.parse({ quota: 500_000 })).toEqual({ quota: 500_000 });
    expect(schema.parse({ quota: 1_200_000 })).toEqual({ quota: 1_200_000 });
  });
  it('says the limits in quota and USD', () => {
    expect(schema.safeParse({ quota: 499_999 }).error?.issues[0]?.message).toBe('At least 500,000 ($1.00)');
    expect(schema.safeParse({ quota: 1_200_001 }).error?.issues[0]?.message).toBe('At most 1,200,000, what you have earned');
  });
});

describe('wallet helpers', () => {
  it('builds the invitation link on the console origin, the code encoded', () => {
    expect(invitationLink('http://127.0.0.1:3000', 'Ab12')).toBe('http://127.0.0.1:3000/register?aff=Ab12');
    expect(invitationLink('https://gw.example', 'a b')).toBe('https://gw.example/register?aff=a%20b');
  });
  it('shows top-up statuses as badges', () => {
    expect(topUpStatusBadge('success')).toEqual({ label: 'Success', className: 'badge ok' });
    expect(topUpStatusBadge('expired')).toEqual({ label: 'Expired', className: 'badge off' });
    expect(topUpStatusBadge('pending')).toEqual({ label: 'Pending', className: 'badge' });
  });
});

describe('redeemFormSchema', () => {
  it('takes a code without the spaces copying added', () => {
    expect(redeemFormSchema.parse({ key: '  AbCd1234  ' })).toEqual({ key: 'AbCd1234' });
  });
  it.each([
    ['', 'Enter a redemption code'],
    ['   ', 'Enter a redemption code'],
    ['k'.repeat(65), 'A redemption code is at most 64 characters'],
  ])('refuses %p: %s', (key, message) => {
    expect(redeemFormSchema.safeParse({ key }).error?.issues[0]?.message).toBe(message);
  });
});
