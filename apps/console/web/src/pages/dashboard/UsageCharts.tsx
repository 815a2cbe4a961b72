import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { formatInteger, formatQuotaAsUsd, formatUsd } from '../../lib/money';
import { ChartFigure } from './ChartFigure';
import { busiestDay, formatCount, type UsageDay, type UsageRangeDays, type UsageSummary } from './usage-series';

/** Colours of the charts' series: distinguishable, and readable on white. */
const SERIES_COLORS = ['#2f5bd3', '#0e9384', '#dc6803', '#9e77ed', '#d92d20', '#667085'];
const AXIS_TICK = { fontSize: 12, fill: '#5b6475' };
const CHART_STYLE = { width: '100%', height: '100%' };
const CHART_MARGIN = { top: 8, right: 8, bottom: 0, left: 0 };

/** Spend and requests per day, spend by model, and the totals per model (the dashboard's lower half). */
export function UsageCharts({ summary, days, quotaPerUnit }: { summary: UsageSummary; days: UsageRangeDays; quotaPerUnit: number }) {
  const period = `the last ${days} days`;
  const busiestSpend = busiestDay(summary.days, (day) => day.usd);
  const busiestRequests = busiestDay(summary.days, (day) => day.requests);
  const topModel = summary.models[0];
  const totalUsd = formatQuotaAsUsd(summary.quota, quotaPerUnit);
  const dateColumn = { header: 'Date', cell: (day: UsageDay) => day.label };

  return (
    <>
      {summary.requests === 0 && <p className="muted" role="status">No calls in {period}.</p>}
      <div className="chart-grid">
        <ChartFigure
          title="Spend per day"
          summary={busiestSpend ? `${totalUsd} spent in ${period}, the most on ${busiestSpend.label} (${formatUsd(busiestSpend.usd)}).` : `Nothing spent in ${period}.`}
          rows={summary.days}
          rowKey={(day) => day.bucket}
          columns={[dateColumn, { header: 'Spend (USD)', cell: (day) => formatUsd(day.usd) }, { header: 'Requests', cell: (day) => formatInteger(day.requests) }]}
        >
          <BarChart responsive style={CHART_STYLE} data={summary.days} accessibilityLayer={false} margin={CHART_MARGIN}>
            <CartesianGrid vertical={false} stroke="#e4e7ec" />
            <XAxis dataKey="label" tick={AXIS_TICK} minTickGap={8} />
            <YAxis tick={AXIS_TICK} tickFormatter={(value: number) => formatUsd(value)} width={64} />
            <Tooltip formatter={(value) => formatUsd(Number(value))} />
            <Bar dataKey="usd" name="Spend" fill={SERIES_COLORS[0]} radius={[3, 3, 0, 0]} />
          </BarChart>
        </ChartFigure>

        <ChartFigure
          title="Requests per day"
          summary={busiestRequests ? `${formatCount(summary.requests, 'request')} in ${period}, the most on ${busiestRequests.label} (${formatInteger(busiestRequests.requests)}).` : `No requests in ${period}.`}
          rows={summary.days}
          rowKey={(day) => day.bucket}
          columns={[dateColumn, { header: 'Requests', cell: (day) => formatInteger(day.requests) }]}
        >
          <BarChart responsive style={CHART_STYLE} data={summary.days} accessibilityLayer={false} margin={CHART_MARGIN}>
            <CartesianGrid vertical={false} stroke="#e4e7ec" />
            <XAxis dataKey="label" tick={AXIS_TICK} minTickGap={8} />
            <YAxis tick={AXIS_TICK} allowDecimals={false} width={48} />
            <Tooltip formatter={(value) => formatInteger(Number(value))} />
            <Bar dataKey="requests" name="Requests" fill={SERIES_COLORS[1]} radius={[3, 3, 0, 0]} />
          </BarChart>
        </ChartFigure>
      </div>

      {topModel && (
        <>
          <ChartFigure
            title="Spend by model"
            summary={`${summary.models.length === 1 ? 'One model' : `${summary.models.length} models`} used in ${period}; the most spent on ${topModel.modelName} (${formatQuotaAsUsd(topModel.quota, quotaPerUnit)} of ${totalUsd}).`}
            rows={summary.days}
            rowKey={(day) => day.bucket}
            columns={[dateColumn, ...summary.series.map((label, index) => ({ header: `${label} (USD)`, cell: (day: UsageDay) => formatUsd(day.seriesUsd[index] ?? 0) }))]}
          >
            <BarChart responsive style={CHART_STYLE} data={summary.days} accessibilityLayer={false} margin={CHART_MARGIN}>
              <CartesianGrid vertical={false} stroke="#e4e7ec" />
              <XAxis dataKey="label" tick={AXIS_TICK} minTickGap={8} />
              <YAxis tick={AXIS_TICK} tickFormatter={(value: number) => formatUsd(value)} width={64} />
              <Tooltip formatter={(value) => formatUsd(Number(value))} />
              <Legend wrapperStyle={{ fontSize: 13 }} />
              {summary.series.map((label, index) => (
                <Bar key={label} dataKey={(day: UsageDay) => day.seriesUsd[index] ?? 0} name={label} stackId="spend" fill={SERIES_COLORS[index % SERIES_COLORS.length]} />
              ))}
            </BarChart>
          </ChartFigure>

          <section className="panel" aria-labelledby="models-title">
            <h2 id="models-title">Usage by model</h2>
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col" className="num">Requests</th>
                    <th scope="col" className="num">Prompt tokens</th>
                    <th scope="col" className="num">Completion tokens</th>
                    <th scope="col" className="num">Spend</th>
                  </tr>
                </thead>
                <tbody>
                  {summary.models.map((model) => (
                    <tr key={model.modelName}>
                      <td className="mono">{model.modelName}</td>
                      <td className="num">{formatInteger(model.requests)}</td>
                      <td className="num">{formatInteger(model.promptTokens)}</td>
                      <td className="num">{formatInteger(model.completionTokens)}</td>
                      <td className="num">{formatQuotaAsUsd(model.quota, quotaPerUnit)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      )}
    </>
  );
}
