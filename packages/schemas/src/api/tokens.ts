import { z } from 'zod';
import { BUDGET_PERIODS } from '../budget-period';
import { TOKEN_STATUS } from '../domain';
import { commaList, groupSchema, idField, idPathParams, MAX_UNIX_TIME, modelNameSchema, noData, pageQuery, pageSchema, quotaField, unixTime } from './common';
import type { ApiOperation } from './operation';

// The console reads the periods from the /api schemas.
export { BUDGET_PERIODS, type BudgetPeriod } from '../budget-period';

/** The largest accepted key limits: far above any real traffic, and within the columns' int4. */
export const KEY_LIMIT_MAX = { rpm_limit: 1_000_000, tpm_limit: 2_000_000_000, max_concurrency: 100_000 } as const;
/** The largest budget in USD; the column holds Decimal(14, 4). */
export const BUDGET_USD_MAX = 1_000_000_000;

const keyLimit = (max: number) => z.number().int().min(0).max(max);
/** USD with at most 4 decimals: the column keeps exactly what was sent. */
const budgetUsd = z
  .number()
  .min(0)
  .max(BUDGET_USD_MAX)
  .refine((usd) => Number(usd.toFixed(4)) === usd, 'at most 4 decimal places');

/** The fields that an admin's edit puts under the admin's control (docs/api.md 3.9.3). */
export const ADMIN_LIMIT_FIELDS = ['rpm_limit', 'tpm_limit', 'max_concurrency', 'budget_usd', 'budget_period'] as const;

const tokenFields = {
  remain_quota: quotaField.optional(),
  unlimited_quota: z.boolean().optional(),
  expired_time: z.number().int().min(-1).max(MAX_UNIX_TIME).optional(),
  model_limits_enabled: z.boolean().optional(),
  /** '' for none. */
  model_limits: commaList(modelNameSchema, 'model', false).optional(),
  allow_ips: z.string().max(10_000).optional(),
  group: z.union([groupSchema, z.literal('')]).optional(),
  /** 0: none. */
  rpm_limit: keyLimit(KEY_LIMIT_MAX.rpm_limit).optional(),
  tpm_limit: keyLimit(KEY_LIMIT_MAX.tpm_limit).optional(),
  max_concurrency: keyLimit(KEY_LIMIT_MAX.max_concurrency).optional(),
  /** null: none. */
  budget_usd: budgetUsd.nullable().optional(),
  budget_period: z.enum(BUDGET_PERIODS).optional(),
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
  rpm_limit: z.number().int(),
  tpm_limit: z.number().int(),
  max_concurrency: z.number().int(),
  budget_usd: z.number().nullable(),
  budget_period: z.enum(BUDGET_PERIODS),
  /** What the key was charged in the current budget period (0 in a period without charges). */
  budget_used_quota: z.number().int(),
  /** An admin set the limits or budget: the owner may only tighten them. */
  limits_set_by_admin: z.boolean(),
});
export type TokenView = z.output<typeof tokenViewSchema>;

/** `user_id`: an admin lists the keys of a user of a lower role (docs/api.md 3.9.3). */
export const tokenListQuery = pageQuery.extend({ user_id: z.string().regex(/^[1-9][0-9]{0,9}$/, 'must be a user id').optional() });

/**
 * docs/api.md 3.2 API keys, scoped to their owner (another user's id is a 404), except that an admin
 * reads and edits the keys of users of a lower role (3.9.3).
 */
export const tokenOperations = [
  {
    method: 'post',
    path: '/api/token',
    auth: 'user',
    summary: 'Create an API key: the only answer with the full key',
    body: tokenCreateBody,
    response: tokenViewSchema,
  },
  {
    method: 'get',
    path: '/api/token',
    auth: 'user',
    summary: 'List the caller\'s keys, or (admins) a lower-role user\'s',
    query: tokenListQuery,
    response: pageSchema(tokenViewSchema),
  },
  { method: 'get', path: '/api/token/:id', auth: 'user', summary: 'One key', params: idPathParams, response: tokenViewSchema },
  { method: 'put', path: '/api/token', auth: 'user', summary: 'Edit a key', body: tokenUpdateBody, response: tokenViewSchema },
  { method: 'delete', path: '/api/token/:id', auth: 'user', summary: 'Delete a key', params: idPathParams, response: noData },
] as const satisfies readonly ApiOperation[];
