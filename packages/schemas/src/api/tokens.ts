import { z } from 'zod';
import { TOKEN_STATUS } from '../domain';
import { commaList, groupSchema, idField, idPathParams, MAX_UNIX_TIME, modelNameSchema, noData, pageQuery, pageSchema, quotaField, unixTime } from './common';
import type { ApiOperation } from './operation';

const tokenFields = {
  remain_quota: quotaField.optional(),
  unlimited_quota: z.boolean().optional(),
  expired_time: z.number().int().min(-1).max(MAX_UNIX_TIME).optional(),
  model_limits_enabled: z.boolean().optional(),
  /** '' for none. */
  model_limits: commaList(modelNameSchema, 'model', false).optional(),
  allow_ips: z.string().max(10_000).optional(),
  group: z.union([groupSchema, z.literal('')]).optional(),
};
const tokenName = z.string().trim().min(1).max(50);

export const tokenCreateBody = z.object({ name: tokenName, ...tokenFields }).strict();
export const tokenUpdateBody = z
  .object({
    id: idField,
    name: tokenName.optional(),
    status: z.union([z.literal(TOKEN_STATUS.enabled), z.literal(TOKEN_STATUS.disabled)]).optional(),
    ...tokenFields,
  })
  .strict();

/** An API key as its owner sees it: the key masked, the status as the relay will treat it. */
export const tokenViewSchema = z.object({
  id: z.number().int(),
  user_id: z.number().int(),
  name: z.string(),
  key: z.string(),
  status: z.number().int(),
  created_at: unixTime,
  accessed_at: unixTime.nullable(),
  /** -1: never expires. */
  expired_time: z.number().int(),
  remain_quota: z.number().int(),
  used_quota: z.number().int(),
  unlimited_quota: z.boolean(),
  model_limits_enabled: z.boolean(),
  model_limits: z.string(),
  allow_ips: z.string(),
  group: z.string(),
});
export type TokenView = z.output<typeof tokenViewSchema>;

/** docs/api.md 3.2 API keys, always scoped to their owner (another user's id is a 404). */
export const tokenOperations = [
  {
    method: 'post',
    path: '/api/token',
    auth: 'user',
    summary: 'Create an API key: the only answer with the full key',
    body: tokenCreateBody,
    response: tokenViewSchema,
  },
  { method: 'get', path: '/api/token', auth: 'user', summary: 'List the caller\'s keys', query: pageQuery, response: pageSchema(tokenViewSchema) },
  { method: 'get', path: '/api/token/:id', auth: 'user', summary: 'One key', params: idPathParams, response: tokenViewSchema },
  { method: 'put', path: '/api/token', auth: 'user', summary: 'Edit a key', body: tokenUpdateBody, response: tokenViewSchema },
  { method: 'delete', path: '/api/token/:id', auth: 'user', summary: 'Delete a key', params: idPathParams, response: noData },
] as const satisfies readonly ApiOperation[];
