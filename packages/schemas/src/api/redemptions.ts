import { z } from 'zod';
import { idField, idPathParams, MAX_UNIX_TIME, noData, pageQuery, pageSchema, unixTime } from './common';
import type { ApiOperation } from './operation';

/** `redemptions.status` (docs/api.md 3.9.5): a used code stays used. */
export const REDEMPTION_STATUS = { enabled: 1, disabled: 2, used: 3 } as const;

/** Codes made by one `POST /api/redemption`. */
export const MAX_REDEMPTION_BATCH = 100;

/** `expired_time` of a code that never expires; 0 is accepted for it too, as new-api sends it. */
export const REDEMPTION_NEVER_EXPIRES = -1;

const redemptionName = z.string().trim().min(1).max(50);
const redemptionQuota = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** Unix seconds in the future, or -1 (or 0) for never; the service checks "in the future". */
const expiredTime = z.number().int().min(REDEMPTION_NEVER_EXPIRES).max(MAX_UNIX_TIME);

export const redemptionCreateBody = z.strictObject({
  name: redemptionName,
  quota: redemptionQuota,
  count: z.number().int().min(1).max(MAX_REDEMPTION_BATCH).default(1),
  expired_time: expiredTime.optional(),
});

export const redemptionUpdateBody = z.strictObject({
  id: idField,
  name: redemptionName.optional(),
  /** Enable or disable; 3 (used) is set only by a redemption. */
  status: z.union([z.literal(REDEMPTION_STATUS.enabled), z.literal(REDEMPTION_STATUS.disabled)]).optional(),
  quota: redemptionQuota.optional(),
  expired_time: expiredTime.optional(),
});

/** Filter of the admin list: part of the name, case-insensitive; empty counts as absent. */
export const redemptionListQuery = z.object({ keyword: z.string().max(50).optional() });

/** The user's redemption: the whole code as it was handed out (surrounding spaces ignored). */
export const topUpRedeemBody = z.strictObject({ key: z.string().trim().min(1).max(64) });

/** A code as admins see it: never the code itself, only its first characters. */
export const redemptionViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  /** The code's first 4 characters then `…`, e.g. `AbCd…`. */
  key: z.string(),
  quota: z.number().int(),
  status: z.number().int(),
  created_by: z.number().int(),
  created_at: unixTime,
  /** -1: never expires. */
  expired_time: z.number().int(),
  redeemed_by: z.number().int().nullable(),
  redeemed_at: unixTime.nullable(),
});
export type RedemptionView = z.output<typeof redemptionViewSchema>;

/** docs/api.md 3.9.5: codes made by admins (new-api's routes), redeemed once by a user for quota. */
export const redemptionOperations = [
  {
    method: 'post',
    path: '/api/redemption',
    auth: 'admin',
    summary: 'Create redemption codes: the only answer with the codes',
    body: redemptionCreateBody,
    response: z.array(z.string()),
  },
  {
    method: 'get',
    path: '/api/redemption',
    auth: 'admin',
    summary: 'List redemption codes',
    query: redemptionListQuery.extend(pageQuery.shape),
    response: pageSchema(redemptionViewSchema),
  },
  { method: 'get', path: '/api/redemption/:id', auth: 'admin', summary: 'One redemption code', params: idPathParams, response: redemptionViewSchema },
  { method: 'put', path: '/api/redemption', auth: 'admin', summary: 'Edit, enable or disable an unused code', body: redemptionUpdateBody, response: redemptionViewSchema },
  { method: 'delete', path: '/api/redemption/:id', auth: 'admin', summary: 'Delete a redemption code', params: idPathParams, response: noData },
  {
    method: 'post',
    path: '/api/user/topup',
    auth: 'user',
    summary: 'Redeem a code: the quota added to the caller\'s balance',
    body: topUpRedeemBody,
    response: z.number().int(),
  },
] as const satisfies readonly ApiOperation[];
