import type { AccountDeps } from '../../deps';
import { unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { findLogPage, type LogFilter, type LogRow } from './repository';

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
