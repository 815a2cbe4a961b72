import type { BudgetPeriod } from '@modelgate/schemas';

/**
 * The start (ms) of the UTC day, week or month holding `nowMs`, as PostgreSQL's
 * `date_trunc(period, now() AT TIME ZONE 'UTC')` gives it to the ledger: weeks start on Monday.
 */
export function budgetPeriodStart(period: BudgetPeriod, nowMs: number): number {
  const now = new Date(nowMs);
  const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  switch (period) {
    case 'day':
      return Date.UTC(year, month, day);
    case 'week':
      return Date.UTC(year, month, day - ((now.getUTCDay() + 6) % 7));
    case 'month':
      return Date.UTC(year, month, 1);
  }
}

/**
 * What the key spent in its current budget period. The ledger counts from 0 again only at the next
 * charge, so a count kept for another period (an earlier one, or one of the period the key had
 * before a change) reads 0.
 */
export function budgetUsedNow(token: { budgetPeriod: string; budgetPeriodStart: Date | null; budgetUsedQuota: bigint }, nowMs: number): number {
  const start = token.budgetPeriodStart?.getTime();
  return start === budgetPeriodStart(token.budgetPeriod as BudgetPeriod, nowMs) ? Number(token.budgetUsedQuota) : 0;
}
