import type { Prisma } from '@modelgate/db';
import type { AccountDeps } from '../../deps';
import { unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { findLogPage, type LogFilter, type LogRow } from './repository';

/**
 * What a row's `other` tells its reader, under new-api's keys: the ratios of a consume row and every
 * token count its charge was computed from (docs/api.md 2.11). The relay's bookkeeping stays out.
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
] as const;

function otherView(other: Prisma.JsonValue): Partial<Record<(typeof OTHER_KEYS)[number], Prisma.JsonValue>> {
  if (other === null || typeof other !== 'object' || Array.isArray(other)) return {};
  return Object.fromEntries(OTHER_KEYS.filter((key) => Object.hasOwn(other, key)).map((key) => [key, other[key] ?? null]));
}

function userView(row: LogRow) {
  return {
    id: Number(row.id),
    created_at: unixSeconds(row.createdAt),
    type: row.type,
    content: row.content,
    model_name: row.modelName,
    token_name: row.tokenName,
    quota: Number(row.quota),
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    use_time_ms: row.useTimeMs,
    is_stream: row.isStream,
    request_id: row.requestId ?? '',
    other: otherView(row.other),
  };
}

export type UserLogView = ReturnType<typeof userView>;
export type AdminLogView = UserLogView & { user_id: number; username: string; channel_id: number | null };

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
