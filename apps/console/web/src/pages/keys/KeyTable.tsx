import { TOKEN_STATUS } from '@modelgate/schemas/domain';
import type { TokenView } from '@modelgate/schemas/api';
import type { ReactNode } from 'react';
import { formatQuotaAsUsd } from '../../lib/money';
import { useQuotaPerUnit } from '../../lib/queries';
import { formatDateTime } from '../../lib/time';
import { budgetUse, limitsSummary } from './key-limits';

/** Key statuses as the relay sees them now (docs/api.md 3.2). */
const STATUS_BADGES: Record<number, { label: string; tone: 'ok' | 'off' }> = {
  [TOKEN_STATUS.enabled]: { label: 'Enabled', tone: 'ok' },
  [TOKEN_STATUS.disabled]: { label: 'Disabled', tone: 'off' },
  [TOKEN_STATUS.expired]: { label: 'Expired', tone: 'off' },
  [TOKEN_STATUS.exhausted]: { label: 'Exhausted', tone: 'off' },
};

/** Keys with their status, spend, limits and budget use; one block per key on phones. `actions` renders a row's buttons. */
export function KeyTable({ tokens, label, actions }: { tokens: readonly TokenView[]; label: string; actions: (token: TokenView) => ReactNode }) {
  const quotaPerUnit = useQuotaPerUnit();
  return (
    <div className="table-wrap">
      <table className="keys-table stacked-table" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">Remaining</th>
            <th scope="col" className="num">Used</th>
            <th scope="col">Limits</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((token) => {
            const badge = STATUS_BADGES[token.status] ?? { label: `Status ${token.status}`, tone: 'off' };
            const budget = budgetUse(token, quotaPerUnit);
            return (
              <tr key={token.id}>
                <th scope="row">{token.name}</th>
                <td className="mono" data-label="Key">{token.key}</td>
                <td data-label="Status"><span className={`badge ${badge.tone}`}>{badge.label}</span></td>
                <td className="num" data-label="Remaining">{token.unlimited_quota ? 'Unlimited' : formatQuotaAsUsd(token.remain_quota, quotaPerUnit)}</td>
                <td className="num" data-label="Used">{formatQuotaAsUsd(token.used_quota, quotaPerUnit)}</td>
                <td className="limits-cell" data-label="Limits">
                  <span className="limit-line">{limitsSummary(token)}</span>
                  <span className="limit-line">{budget ? budget.text : 'No budget'}</span>
                  {budget && (
                    <span className={`budget-bar${budget.exhausted ? ' full' : ''}`} aria-hidden="true">
                      <span style={{ width: `${Math.round(budget.fraction * 100)}%` }} />
                    </span>
                  )}
                  {token.limits_set_by_admin && <span className="limit-line cell-note muted">Set by an admin</span>}
                </td>
                <td className="date-cell" data-label="Expires">{token.expired_time === -1 ? 'Never' : formatDateTime(token.expired_time)}</td>
                <td className="date-cell" data-label="Last used">{token.accessed_at === null ? 'Never' : formatDateTime(token.accessed_at)}</td>
                <td className="actions-cell">{actions(token)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
