import type { BudgetPeriod, TokenView } from '@modelgate/schemas/api';
import { formatInteger, quotaToUsd } from '../../lib/money';

/** The period select's choices (UTC calendar periods, docs/api.md 3.9.4). */
export const BUDGET_PERIOD_LABELS: Record<BudgetPeriod, string> = {
  day: 'Per day',
  week: 'Per week (from Monday)',
  month: 'Per month',
};

const CURRENT_PERIOD: Record<BudgetPeriod, string> = { day: 'today', week: 'this week', month: 'this month' };

/** A key's rate limits in a few words, e.g. "60 req/min · 4 at once"; "No rate limits" without any. */
export function limitsSummary(token: Pick<TokenView, 'rpm_limit' | 'tpm_limit' | 'max_concurrency'>): string {
  const parts = [
    token.rpm_limit > 0 && `${formatInteger(token.rpm_limit)} req/min`,
    token.tpm_limit > 0 && `${formatInteger(token.tpm_limit)} tokens/min`,
    token.max_concurrency > 0 && `${formatInteger(token.max_concurrency)} at once`,
  ].filter((part): part is string => Boolean(part));
  return parts.length > 0 ? parts.join(' · ') : 'No rate limits';
}

const budgetAmount = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });

export interface BudgetUse {
  /** e.g. "USD 3.20 of 10.00 this month". */
  text: string;
  /** Spent over budget, from 0 to 1 (a bar's width); 1 when the budget is used up. */
  fraction: number;
  exhausted: boolean;
}

/** What a key with a budget spent of it in the current period; undefined without a budget. */
export function budgetUse(token: Pick<TokenView, 'budget_usd' | 'budget_period' | 'budget_used_quota'>, quotaPerUnit: number): BudgetUse | undefined {
  if (token.budget_usd === null) return undefined;
  const used = quotaToUsd(token.budget_used_quota, quotaPerUnit);
  const budget = token.budget_usd;
  const exhausted = used >= budget;
  return {
    text: `USD ${budgetAmount.format(used)} of ${budgetAmount.format(budget)} ${CURRENT_PERIOD[token.budget_period]}`,
    fraction: exhausted ? 1 : used / budget,
    exhausted,
  };
}
