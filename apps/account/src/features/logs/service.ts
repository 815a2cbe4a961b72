import type { Prisma } from '@modelgate/db';
import { type AdminLogView, consumeContentOf, consumeOtherView, LOG_TYPE, type MediaBilled, type UserLogView } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { unixSeconds } from '../../lib/clock';
import { type CsvCell, csvRecord } from '../../lib/csv';
import type { Page, PageRequest } from '../../lib/envelope';
import { findLogPage, findLogsBefore, type LogFilter, type LogRow } from './repository';

/**
 * What a media call had and, priced per unit, its units (docs/api.md 2.14): keys of a consume row's
 * `other`, also the export's last columns.
 */
const MEDIA_BILLED_KEYS = ['images', 'characters', 'seconds', 'requests', 'units', 'unit', 'usd_per_unit'] as const satisfies readonly (keyof MediaBilled)[];

/**
 * What a row's `other` tells its reader, under new-api's keys: the ratios of a consume row and every
 * count its charge was computed from (docs/api.md 2.11, 2.14: tokens, the long-context tier, server
 * tool calls, media quantities and units). The relay's bookkeeping stays out.
 */
const OTHER_KEYS = [
  'group',
  'model_ratio',
  'completion_ratio',
  'group_ratio',
  'cache_ratio',
  'cache_creation_ratio',
  'cache_tokens',
  'cache_creation_tokens',
  'reasoning_tokens',
  'tier_above_prompt_tokens',
  'server_tools',
  ...MEDIA_BILLED_KEYS,
] as const;

/** Whether the row is a priced consume row, as the relay writes them (its `other` has the ratios). */
function isPricedConsume(row: LogRow, stored: Record<string, unknown>): boolean {
  return row.type === LOG_TYPE.consume && typeof stored.model_ratio === 'number';
}

/** A row's `other`: a priced consume row's with the counts of 0 and unused ratios it leaves out (lean rows). */
function otherOf(row: LogRow): Record<string, unknown> {
  const { other } = row;
  const stored = other === null || typeof other !== 'object' || Array.isArray(other) ? {} : other;
  return isPricedConsume(row, stored) ? consumeOtherView(stored) : stored;
}

function otherView(other: Record<string, unknown>): Partial<Record<(typeof OTHER_KEYS)[number], Prisma.JsonValue>> {
  return Object.fromEntries(OTHER_KEYS.filter((key) => Object.hasOwn(other, key)).map((key) => [key, (other[key] ?? null) as Prisma.JsonValue]));
}

function userView(row: LogRow): UserLogView {
  const other = otherOf(row);
  return {
    id: Number(row.id),
    created_at: unixSeconds(row.createdAt),
    type: row.type,
    // A priced consume row's content is written from its `other` (docs/api.md 3.2); older rows stored it.
    content: row.content === '' && isPricedConsume(row, other) ? consumeContentOf(other) : row.content,
    model_name: row.modelName,
    token_name: row.tokenName,
    quota: Number(row.quota),
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    use_time_ms: row.useTimeMs,
    is_stream: row.isStream,
    request_id: row.requestId ?? '',
    other: otherView(other),
  };
}

function adminView(row: LogRow): AdminLogView {
  return { ...userView(row), user_id: row.userId, username: row.username, channel_id: row.channelId };
}

export async function listOwnLogs(deps: AccountDeps, userId: number, filter: LogFilter, page: PageRequest): Promise<Page<UserLogView>> {
  const { total, rows } = await findLogPage(deps.prisma, { ...filter, userId, username: undefined }, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(userView) };
}

export async function listAllLogs(deps: AccountDeps, filter: LogFilter, page: PageRequest): Promise<Page<AdminLogView>> {
  const { total, rows } = await findLogPage(deps.prisma, filter, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(adminView) };
}

/** docs/api.md 3.8: an export holds at most this many rows, the newest. */
export const MAX_EXPORT_ROWS = 100_000;
const EXPORT_PAGE_ROWS = 1_000;

/** The list's fields (3.2) as CSV columns; of `other` (a JSON object) only MEDIA_BILLED_KEYS, after these. */
const OWN_COLUMNS = [
  'id',
  'created_at',
  'type',
  'content',
  'model_name',
  'token_name',
  'quota',
  'prompt_tokens',
  'completion_tokens',
  'use_time_ms',
  'is_stream',
  'request_id',
] as const satisfies readonly (keyof UserLogView)[];
/** Plus what the admin list adds (3.3). */
const ALL_COLUMNS = [...OWN_COLUMNS, 'user_id', 'username', 'channel_id'] as const satisfies readonly (keyof AdminLogView)[];

/** A value of `other` as a cell: a number or text as it is, anything else empty. */
function otherCell(value: unknown): CsvCell {
  return typeof value === 'number' || typeof value === 'string' ? value : null;
}

export interface LogExport {
  /** Whose logs: the caller's own (`userId`, the filter's `username` ignored) or everyone's. */
  scope: { userId: number } | 'all';
  filter: LogFilter;
  /** MAX_EXPORT_ROWS unless a test wants a smaller cap. */
  maxRows?: number;
  pageRows?: number;
}

/**
 * docs/api.md 3.8 log export: CSV text, read in keyset pages by id, newest first like the lists. The
 * header comes with the first page, so a failing first query fails before any byte is sent.
 */
export async function* logCsvChunks(deps: AccountDeps, request: LogExport): AsyncGenerator<string> {
  const { scope, maxRows = MAX_EXPORT_ROWS, pageRows = EXPORT_PAGE_ROWS } = request;
  const filter: LogFilter = scope === 'all' ? request.filter : { ...request.filter, userId: scope.userId, username: undefined };
  const columns = scope === 'all' ? ALL_COLUMNS : OWN_COLUMNS;
  let chunk = csvRecord([...columns, ...MEDIA_BILLED_KEYS]);
  let beforeId: bigint | undefined;
  for (let remaining = maxRows; remaining > 0; ) {
    const take = Math.min(pageRows, remaining);
    const rows = await findLogsBefore(deps.prisma, filter, beforeId, take);
    for (const row of rows) {
      const view = adminView(row);
      chunk += csvRecord([...columns.map((column) => view[column]), ...MEDIA_BILLED_KEYS.map((key) => otherCell(view.other[key]))]);
    }
    yield chunk;
    chunk = '';
    remaining -= rows.length;
    if (rows.length < take) return;
    beforeId = rows[rows.length - 1]!.id;
  }
  if (chunk) yield chunk;
}
