/** A key's budget period (docs/api.md 3.9.4): UTC calendar days, weeks from Monday, months. */
export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** The stored period; the account service writes only these three, anything else reads as a month. */
export function budgetPeriodOf(name: string): BudgetPeriod {
  return name === 'day' || name === 'week' ? name : 'month';
}

/** One period, epoch ms: `start` included, `end` (the next period's start) excluded. */
export interface PeriodSpan {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

/**
 * The period holding `now`, as the ledger's `date_trunc(period, now() AT TIME ZONE 'UTC')` counts
 * it (weeks start on Monday).
 */
export function periodSpanAt(period: BudgetPeriod, now: number): PeriodSpan {
  const date = new Date(now);
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (period === 'day') return { start: day, end: day + DAY_MS };
  if (period === 'week') {
    const start = day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
    return { start, end: start + 7 * DAY_MS };
  }
  return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
}
