import { balanceFigures, formatInteger, formatQuotaAsUsd, formatUsd, formatUsdPrice, quotaToUsd, usdToQuota } from '../web/src/lib/money';

describe('money in the console', () => {
  it('shows quota as USD at the gateway quota per unit', () => {
    expect(quotaToUsd(1_250_000, 500_000)).toBe(2.5);
    expect(formatQuotaAsUsd(1_250_000, 500_000)).toBe('$2.50');
    expect(formatQuotaAsUsd(0, 500_000)).toBe('$0.00');
    expect(formatQuotaAsUsd(-75_000, 500_000)).toBe('-$0.15');
    expect(formatQuotaAsUsd(1_000_000_000, 500_000)).toBe('$2,000.00');
    // A different QuotaPerUnit changes the reading, not the quota.
    expect(formatQuotaAsUsd(1_000, 1_000)).toBe('$1.00');
  });

  it('never shows the cost of one small call as $0.00', () => {
    // 17 quota = USD 0.000034 at 500000 per unit: a few tokens of a cheap model.
    expect(formatQuotaAsUsd(17, 500_000)).toBe('$0.000034');
    expect(formatUsd(0.0012)).toBe('$0.0012');
    expect(formatUsd(0.009)).toBe('$0.009');
    expect(formatUsd(-0.0005)).toBe('-$0.0005');
    // Cents from one cent up, at most 6 decimals below it.
    expect(formatUsd(0.01)).toBe('$0.01');
    expect(formatUsd(0.0000001)).toBe('$0.00');
  });

  it('shows prices per 1M tokens with the digits they were set with', () => {
    expect(formatUsdPrice(0.125)).toBe('$0.125');
    expect(formatUsdPrice(0.075)).toBe('$0.075');
    expect(formatUsdPrice(15)).toBe('$15.00');
    expect(formatUsdPrice(0.000001)).toBe('$0.000001');
  });

  it('turns a USD amount into whole quota units', () => {
    expect(usdToQuota(2.5, 500_000)).toBe(1_250_000);
    expect(usdToQuota(0.1, 500_000)).toBe(50_000);
    // 0.1 + 0.2 is 0.30000000000000004 in floating point: still exactly 150000 units.
    expect(usdToQuota(0.1 + 0.2, 500_000)).toBe(150_000);
    expect(usdToQuota(0.0000001, 500_000)).toBe(0);
    expect(Number.isInteger(usdToQuota(1 / 3, 500_000))).toBe(true);
  });

  it('shows a balance below 0 as a debt to top up, not as a negative amount', () => {
    expect(balanceFigures(1_250_000, 500_000)).toEqual({ value: '$2.50', detail: '1,250,000 quota' });
    expect(balanceFigures(0, 500_000)).toEqual({ value: '$0.00', detail: '0 quota' });
    expect(balanceFigures(-1_250_000, 500_000)).toEqual({ value: 'Debt: $2.50', detail: '-1,250,000 quota; top up to continue' });
    // A debt of a few tokens still shows its size.
    expect(balanceFigures(-17, 500_000)).toEqual({ value: 'Debt: $0.000034', detail: '-17 quota; top up to continue' });
  });

  it('writes whole numbers with thousands separators', () => {
    expect(formatInteger(1234567)).toBe('1,234,567');
    expect(formatInteger(0)).toBe('0');
  });
});
