import { z } from 'zod';
import { LOG_TYPE } from '../domain';
import { pageQuery, pageSchema, unixTime, unixTimeParam } from './common';
import type { ApiOperation } from './operation';

/** `type` 0: every type (new-api's UI sends 0 for "all"). */
export const ALL_LOG_TYPES = 0;

/** The filters of the log lists and exports (docs/api.md 3.2, 3.3); empty parameters count as absent. */
export const logQuery = z.object({
  /** A LOG_TYPE, or 0 for all types. */
  type: z.coerce.number().int().min(ALL_LOG_TYPES).max(Math.max(...Object.values(LOG_TYPE))).optional(),
  model_name: z.string().max(200).optional(),
  /** An API key's name, exactly (a log row keeps the name the key had at the time). */
  token_name: z.string().max(100).optional(),
  start_timestamp: unixTimeParam.optional(),
  end_timestamp: unixTimeParam.optional(),
  username: z.string().max(20).optional(),
});
const ownLogQuery = logQuery.omit({ username: true });

/** A log row as its user sees it; `other` holds the ratios and token counts of a consume row (2.11). */
export const userLogViewSchema = z.object({
  id: z.number().int(),
  created_at: unixTime,
  type: z.number().int(),
  content: z.string(),
  model_name: z.string(),
  token_name: z.string(),
  quota: z.number().int(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  use_time_ms: z.number().int(),
  is_stream: z.boolean(),
  request_id: z.string(),
  other: z.record(z.string(), z.unknown()),
});
export type UserLogView = z.output<typeof userLogViewSchema>;
export const adminLogViewSchema = userLogViewSchema.extend({ user_id: z.number().int(), username: z.string(), channel_id: z.number().int().nullable() });
export type AdminLogView = z.output<typeof adminLogViewSchema>;

/** RFC 4180 text, a header row first (docs/api.md 3.8). */
const csv = z.string();

/** docs/api.md 3.2 (own logs), 3.3 (every user's logs, admins) and their CSV exports (3.8). */
export const logOperations = [
  {
    method: 'get',
    path: '/api/log/self',
    auth: 'user',
    summary: 'The caller\'s log rows, newest first',
    query: ownLogQuery.extend(pageQuery.shape),
    response: pageSchema(userLogViewSchema),
  },
  {
    method: 'get',
    path: '/api/log/self/export',
    auth: 'user',
    summary: 'The caller\'s log rows as CSV (at most 100,000, newest first)',
    query: ownLogQuery,
    response: csv,
    raw: 'text/csv',
  },
  {
    method: 'get',
    path: '/api/log/export',
    auth: 'admin',
    summary: 'Every user\'s log rows as CSV (at most 100,000, newest first)',
    query: logQuery,
    response: csv,
    raw: 'text/csv',
  },
  {
    method: 'get',
    path: '/api/log',
    auth: 'admin',
    summary: 'Every user\'s log rows, newest first',
    query: logQuery.extend(pageQuery.shape),
    response: pageSchema(adminLogViewSchema),
  },
] as const satisfies readonly ApiOperation[];
