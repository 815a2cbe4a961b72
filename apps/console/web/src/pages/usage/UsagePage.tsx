import { ALL_LOG_TYPES, type UserLogView } from '@modelgate/schemas/api';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useSearchParams } from 'react-router';
import { api } from '../../api';
import { InputField, SelectField } from '../../components/Field';
import { ErrorAlert, Loading, PageHeader } from '../../components/feedback';
import { Pagination } from '../../components/Pagination';
import { formatInteger } from '../../lib/money';
import { usePricing, useQuotaPerUnit } from '../../lib/queries';
import { formatDateTime, localInputToSeconds, secondsToLocalInput } from '../../lib/time';
import { formatCount } from '../dashboard/usage-series';
import {
  exportFileName,
  filtersFromSearch,
  formatDuration,
  formatSignedQuota,
  type LogFilters,
  LOG_TYPE_OPTIONS,
  logQueryOf,
  logTypeLabel,
  pageFromSearch,
  searchOfFilters,
} from './log-filters';
import { mediaBilledText } from './media-billed';

const PAGE_SIZE = 20;
/** "To" is picked to the minute; the API's end is inclusive, so the whole minute counts. */
const MINUTE_END = 59;
/** Long enough for the browser to have read the file behind the download's object URL. */
const DOWNLOAD_URL_LIFETIME_MS = 60_000;

/** The caller's log rows: filters in the address bar, a page of rows, and the same rows as CSV. */
export function UsagePage() {
  const [search, setSearch] = useSearchParams();
  const filters = filtersFromSearch(search);
  const page = pageFromSearch(search);
  const logs = useQuery({
    queryKey: ['logs', 'self', filters, page],
    queryFn: () => api.call('get /api/log/self', { query: { ...logQueryOf(filters), p: String(page), page_size: String(PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <PageHeader title="Usage">
        <ExportButton filters={filters} />
      </PageHeader>
      <FilterForm filters={filters} onApply={(next) => setSearch(searchOfFilters(next))} />
      <ErrorAlert error={logs.error} />
      {!logs.data && !logs.error && <Loading what="usage logs" />}
      {logs.data && (
        <>
          <p className="muted" role="status">{formatCount(logs.data.total, 'log row')}</p>
          {logs.data.items.length > 0 && <LogTable rows={logs.data.items} />}
          <Pagination page={page} pageSize={PAGE_SIZE} total={logs.data.total} label="Usage logs" onPage={(next) => setSearch(searchOfFilters(filters, next))} />
        </>
      )}
    </>
  );
}

interface FilterValues {
  type: string;
  model: string;
  key: string;
  from: string;
  to: string;
}

function formValuesOf(filters: LogFilters): FilterValues {
  return {
    type: String(filters.type),
    model: filters.model,
    key: filters.key,
    from: filters.from === undefined ? '' : secondsToLocalInput(filters.from),
    to: filters.to === undefined ? '' : secondsToLocalInput(filters.to),
  };
}

function FilterForm({ filters, onApply }: { filters: LogFilters; onApply: (filters: LogFilters) => void }) {
  // `values` follows the address bar, so Back and Forward show the filters of the rows shown.
  const form = useForm<FilterValues>({ values: formValuesOf(filters) });
  const pricing = usePricing();
  const submit = form.handleSubmit((values) => {
    const to = localInputToSeconds(values.to);
    onApply({ type: Number(values.type), model: values.model.trim(), key: values.key.trim(), from: localInputToSeconds(values.from), to: to === undefined ? undefined : to + MINUTE_END });
  });
  const clear = () => {
    const none: LogFilters = { type: ALL_LOG_TYPES, model: '', key: '' };
    // The address bar may hold no filters already: reset what was typed but not applied too.
    form.reset(formValuesOf(none));
    onApply(none);
  };
  const toError = form.formState.errors.to?.message;

  return (
    <form className="panel usage-filters" aria-label="Filters" onSubmit={(event) => void submit(event)} noValidate>
      <div className="form-grid">
        <SelectField label="Type" {...form.register('type')}>
          {LOG_TYPE_OPTIONS.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
        </SelectField>
        <InputField label="Model" list="usage-models" autoComplete="off" spellCheck={false} hint="The exact model name" {...form.register('model')} />
        <InputField label="Key" autoComplete="off" spellCheck={false} hint="The exact API key name" {...form.register('key')} />
        <InputField label="From" type="datetime-local" {...form.register('from')} />
        <InputField
          label="To"
          type="datetime-local"
          error={toError}
          {...form.register('to', {
            validate: (to, values) => {
              const start = localInputToSeconds(values.from);
              const end = localInputToSeconds(to);
              return start === undefined || end === undefined || start <= end || 'Pick a time after "From"';
            },
          })}
        />
      </div>
      <datalist id="usage-models">
        {pricing.data?.items.map((price) => <option key={price.model_name} value={price.model_name} />)}
      </datalist>
      <div className="row">
        <button type="submit" className="primary">Apply filters</button>
        <button type="button" onClick={clear}>Clear</button>
      </div>
    </form>
  );
}

/** Downloads the filtered rows as CSV: fetched with the API client (the export needs New-Api-User), saved from memory. */
function ExportButton({ filters }: { filters: LogFilters }) {
  const [exporting, setExporting] = useState(false);
  const [error, setError] = useState<unknown>();
  async function exportCsv() {
    setExporting(true);
    setError(undefined);
    try {
      const csv = await api.call('get /api/log/self/export', { query: logQueryOf(filters) });
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = exportFileName(new Date());
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), DOWNLOAD_URL_LIFETIME_MS);
    } catch (err) {
      setError(err);
    } finally {
      setExporting(false);
    }
  }
  return (
    <>
      <button type="button" onClick={() => void exportCsv()} disabled={exporting}>{exporting ? 'Exporting…' : 'Export CSV'}</button>
      {Boolean(error) && <div className="export-error"><ErrorAlert error={error} /></div>}
    </>
  );
}

function LogTable({ rows }: { rows: readonly UserLogView[] }) {
  const quotaPerUnit = useQuotaPerUnit();
  return (
    <div className="table-wrap">
      <table className="stacked-table" aria-label="Usage logs, newest first">
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Model</th>
            <th scope="col">Key</th>
            <th scope="col" className="num">Prompt tokens</th>
            <th scope="col" className="num">Completion tokens</th>
            <th scope="col" className="num">Cost</th>
            <th scope="col" className="num">Duration</th>
            <th scope="col">Stream</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const billed = mediaBilledText(row.other);
            return (
              <tr key={row.id}>
                <td data-label="Time">{formatDateTime(row.created_at)}</td>
                <td data-label="Type"><span className={`badge log-type-${row.type}`}>{logTypeLabel(row.type)}</span></td>
                <td className="mono" data-label="Model">{row.model_name}</td>
                <td data-label="Key">{row.token_name}</td>
                <td className="num" data-label="Prompt tokens">{formatInteger(row.prompt_tokens)}</td>
                <td className="num" data-label="Completion tokens">{formatInteger(row.completion_tokens)}</td>
                <td className="num" data-label="Cost">{formatSignedQuota(row.quota, quotaPerUnit)}</td>
                <td className="num" data-label="Duration">{row.use_time_ms > 0 ? formatDuration(row.use_time_ms) : ''}</td>
                <td data-label="Stream">{row.is_stream ? 'Yes' : 'No'}</td>
                <td className="usage-details" data-label="Details">
                  {billed && <span className="usage-billed">{billed}</span>}
                  {row.content}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
