import { ALL_LOG_TYPES } from '@modelgate/schemas/api';
import { LOG_TYPE } from '@modelgate/schemas/domain';
import { formatQuotaAsUsd } from '../../lib/money';

/** The ledger's log types (docs/api.md 2.5) as the type filter offers them, "all" first. */
export const LOG_TYPE_OPTIONS = [
  { value: ALL_LOG_TYPES, label: 'All types' },
  { value: LOG_TYPE.topup, label: 'Top-up' },
  { value: LOG_TYPE.consume, label: 'Consume' },
  { value: LOG_TYPE.manage, label: 'Manage' },
  { value: LOG_TYPE.system, label: 'System' },
  { value: LOG_TYPE.error, label: 'Error' },
  { value: LOG_TYPE.refund, label: 'Refund' },
] as const;

/** The filters of the Usage page, kept in the address bar so a reload or a shared link keeps them. */
export interface LogFilters {
  /** A log type, or ALL_LOG_TYPES. */
  type: number;
  /** An exact model name; '' for any. */
  model: string;
  /** An API key's exact name; '' for any. */
  key: string;
  /** Inclusive unix seconds. */
  from?: number;
  to?: number;
}

const KNOWN_TYPES = new Set<number>(LOG_TYPE_OPTIONS.map((option) => option.value));

function seconds(text: string | null): number | undefined {
  return text !== null && /^[0-9]{1,12}$/.test(text) ? Number(text) : undefined;
}

/** The filters in `search` (?type&model&key&from&to); anything unreadable counts as absent. */
export function filtersFromSearch(search: URLSearchParams): LogFilters {
  const type = Number(search.get('type'));
  return {
    type: KNOWN_TYPES.has(type) ? type : ALL_LOG_TYPES,
    model: search.get('model')?.trim() ?? '',
    key: search.get('key')?.trim() ?? '',
    from: seconds(search.get('from')),
    to: seconds(search.get('to')),
  };
}

/** The 1-based page in `search` (?p), 1 when absent or unreadable. */
export function pageFromSearch(search: URLSearchParams): number {
  const page = Number(search.get('p'));
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/** `filters` and `page` as search parameters, leaving out what is the default. */
export function searchOfFilters(filters: LogFilters, page = 1): URLSearchParams {
  const search = new URLSearchParams();
  if (filters.type !== ALL_LOG_TYPES) search.set('type', String(filters.type));
  if (filters.model) search.set('model', filters.model);
  if (filters.key) search.set('key', filters.key);
  if (filters.from !== undefined) search.set('from', String(filters.from));
  if (filters.to !== undefined) search.set('to', String(filters.to));
  if (page > 1) search.set('p', String(page));
  return search;
}

/** The filter parameters of GET /api/log/self and its CSV export. */
export function logQueryOf(filters: LogFilters) {
  return {
    type: filters.type === ALL_LOG_TYPES ? undefined : filters.type,
    model_name: filters.model || undefined,
    token_name: filters.key || undefined,
    start_timestamp: filters.from,
    end_timestamp: filters.to,
  };
}

export function logTypeLabel(type: number): string {
  return LOG_TYPE_OPTIONS.find((option) => option.value === type)?.label ?? `Type ${type}`;
}

/** A log row's signed quota as USD: "+$5.00" for a top-up, "-$0.0012" for a charge. */
export function formatSignedQuota(quota: number, quotaPerUnit: number): string {
  const usd = formatQuotaAsUsd(quota, quotaPerUnit);
  return quota > 0 ? `+${usd}` : usd;
}

/** A call's duration: "850 ms" below a second, else seconds with one decimal ("12.3 s"). */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The CSV download's file name, e.g. modelgate-usage-20261125T153000Z.csv (UTC). */
export function exportFileName(now: Date): string {
  return `modelgate-usage-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.csv`;
}
