import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api';
import { ErrorAlert, Loading, PageHeader } from '../../components/feedback';
import { balanceFigures, formatInteger, formatQuotaAsUsd } from '../../lib/money';
import { useQuotaPerUnit, useSelf } from '../../lib/queries';
import { nowSeconds } from '../../lib/time';
import { StatCard } from './StatCard';
import { formatCount, summarizeUsage, USAGE_RANGES, type UsageRangeDays, usageRangeQuery } from './usage-series';

// recharts is most of the console's weight: loaded beside the app rather than inside its bundle.
const UsageCharts = lazy(() => import('./UsageCharts').then((module) => ({ default: module.UsageCharts })));

function rangeOf(search: URLSearchParams): UsageRangeDays {
  return USAGE_RANGES.find((days) => String(days) === search.get('range')) ?? USAGE_RANGES[0];
}

/** Balance and totals, then spend and requests per day and by model over the last 7 or 30 days. */
export function DashboardPage() {
  const [search, setSearch] = useSearchParams();
  const days = rangeOf(search);
  const quotaPerUnit = useQuotaPerUnit();
  const self = useSelf();
  const usage = useQuery({
    queryKey: ['usage', 'self', days],
    queryFn: () => api.call('get /api/data/self', { query: usageRangeQuery(days, nowSeconds()) }),
    placeholderData: keepPreviousData,
  });
  const summary = usage.data && summarizeUsage(usage.data, quotaPerUnit);
  const neverUsed = self.data?.request_count === 0 && summary?.requests === 0;

  return (
    <>
      <PageHeader title="Dashboard">
        <div className="segmented" role="group" aria-label="Range">
          {USAGE_RANGES.map((option) => (
            <button key={option} type="button" aria-pressed={option === days} onClick={() => setSearch(option === USAGE_RANGES[0] ? {} : { range: String(option) })}>
              Last {option} days
            </button>
          ))}
        </div>
      </PageHeader>

      <ErrorAlert error={self.error} />
      {self.data && (
        <section className="cards stat-cards" aria-label="Account">
          <StatCard label="Balance" {...balanceFigures(self.data.quota, quotaPerUnit)} />
          <StatCard label="Used" value={formatQuotaAsUsd(self.data.used_quota, quotaPerUnit)} detail={`${formatInteger(self.data.used_quota)} quota`} />
          <StatCard label="Requests" value={formatInteger(self.data.request_count)} detail="since the account was created" />
          {summary && <StatCard label={`Spent in the last ${days} days`} value={formatQuotaAsUsd(summary.quota, quotaPerUnit)} detail={formatCount(summary.requests, 'request')} />}
        </section>
      )}

      <ErrorAlert error={usage.error} />
      {!summary && !usage.error && <Loading what="usage" />}
      {summary && neverUsed && <FirstSteps />}
      {summary && !neverUsed && (
        <Suspense fallback={<Loading what="charts" />}>
          <UsageCharts summary={summary} days={days} quotaPerUnit={quotaPerUnit} />
        </Suspense>
      )}
    </>
  );
}

/** The empty state: where a new user gets a key and makes a first call. */
function FirstSteps() {
  return (
    <section className="panel empty-state" aria-labelledby="first-steps-title">
      <h2 id="first-steps-title">No usage yet</h2>
      <p>Spend and requests show up here as soon as your first call goes through the gateway.</p>
      <ol>
        <li><Link to="/keys">Create an API key</Link>.</li>
        <li>Make a first call with the copy-ready snippets of the <Link to="/quick-start">Quick start</Link>.</li>
      </ol>
    </section>
  );
}
