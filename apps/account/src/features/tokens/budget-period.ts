import { budgetPeriodOf, periodSpanAt } from '@modelgate/schemas';

/**
 * What the key spent in its current budget period. The ledger counts from 0 again only at the next
 * charge, so a count kept for another period (an earlier one, or one of the period the key had
 * before a change) reads 0.
 */
export function budgetUsedNow(token: { budgetPeriod: string; budgetPeriodStart: Date | null; budgetUsedQuota: bigint }, nowMs: number): number {
  const start = token.budgetPeriodStart?.getTime();
  return start === periodSpanAt(budgetPeriodOf(token.budgetPeriod), nowMs).start ? Number(token.budgetUsedQuota) : 0;
}
