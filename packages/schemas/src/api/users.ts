import { z } from 'zod';
import { ROLE } from '../domain';
import { displayNameSchema, emailSchema, groupSchema, idField, idPathParams, pageQuery, pageSchema, passwordSchema, quotaField, unixTime, usernameSchema } from './common';
import type { ApiOperation } from './operation';

/** The data of a completed login (docs/api.md 3.1). */
export const loginViewSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  display_name: z.string(),
  role: z.number().int(),
  status: z.number().int(),
  group: z.string(),
});
export type LoginView = z.output<typeof loginViewSchema>;

/** docs/api.md 3.2 `GET /api/user/self`. */
export const selfViewSchema = loginViewSchema.extend({
  email: z.string(),
  quota: z.number().int(),
  used_quota: z.number().int(),
  request_count: z.number().int(),
  aff_code: z.string(),
  aff_count: z.number().int(),
  aff_quota: z.number().int(),
  aff_history_quota: z.number().int(),
  inviter_id: z.number().int().nullable(),
  two_factor_enabled: z.boolean(),
  created_at: unixTime,
});
export type SelfView = z.output<typeof selfViewSchema>;

/** What admins see: the profile plus the admin-only remark. */
export const adminUserViewSchema = selfViewSchema.extend({ remark: z.string() });
export type AdminUserView = z.output<typeof adminUserViewSchema>;

export const selfUpdateBody = z
  .object({
    display_name: displayNameSchema.optional(),
    email: z.union([emailSchema, z.literal('')]).optional(),
    password: passwordSchema.optional(),
    original_password: z.string().max(128).optional(),
  })
  .strict();

export const affTransferBody = z.object({ quota: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }).strict();

export const adminUserUpdateBody = z
  .object({
    id: idField,
    display_name: displayNameSchema.optional(),
    group: groupSchema.optional(),
    quota: quotaField.optional(),
    remark: z.string().max(255).optional(),
    /** '' removes it; an address another user has is a 409. */
    email: z.union([emailSchema, z.literal('')]).optional(),
  })
  .strict();

/** docs/api.md 3.8: the username and password rules of registration (3.1); never a root. */
export const adminUserCreateBody = z
  .object({
    username: usernameSchema,
    password: passwordSchema,
    display_name: displayNameSchema.optional(),
    group: groupSchema.optional(),
    quota: quotaField.optional(),
    role: z.union([z.literal(ROLE.user), z.literal(ROLE.admin)], { error: `must be ${ROLE.user} (common user) or ${ROLE.admin} (admin)` }).optional(),
  })
  .strict();

export const MANAGE_ACTIONS = ['enable', 'disable', 'delete', 'promote', 'demote'] as const;
export type ManageAction = (typeof MANAGE_ACTIONS)[number];

export const manageUserBody = z.object({ id: idField, action: z.enum(MANAGE_ACTIONS) }).strict();

/** docs/api.md 3.2: the logged-in user's own account. */
export const selfOperations = [
  { method: 'get', path: '/api/user/self', auth: 'user', summary: 'The caller\'s profile', response: selfViewSchema },
  {
    method: 'put',
    path: '/api/user/self',
    auth: 'user',
    summary: 'Change display name, email or password (with original_password)',
    body: selfUpdateBody,
    response: selfViewSchema,
  },
  { method: 'get', path: '/api/user/token', auth: 'user', summary: 'A new access token; the previous one stops working', response: z.string() },
  { method: 'get', path: '/api/user/aff', auth: 'user', summary: 'The caller\'s affiliate code', response: z.string() },
  {
    method: 'post',
    path: '/api/user/aff_transfer',
    auth: 'user',
    summary: 'Move affiliate quota to the balance',
    body: affTransferBody,
    response: z.object({ quota: z.number().int(), aff_quota: z.number().int() }),
  },
] as const satisfies readonly ApiOperation[];

/** docs/api.md 3.3 and 3.8: users administration. */
export const userAdminOperations = [
  { method: 'get', path: '/api/user', auth: 'admin', summary: 'List users', query: pageQuery, response: pageSchema(adminUserViewSchema) },
  { method: 'post', path: '/api/user', auth: 'admin', summary: 'Create a user (role 10 only by root)', body: adminUserCreateBody, response: adminUserViewSchema },
  { method: 'put', path: '/api/user', auth: 'admin', summary: 'Edit a user', body: adminUserUpdateBody, response: adminUserViewSchema },
  {
    method: 'post',
    path: '/api/user/manage',
    auth: 'admin',
    summary: 'Enable, disable, delete, promote (root) or demote a user',
    body: manageUserBody,
    response: z.object({ role: z.number().int(), status: z.number().int() }).nullable(),
  },
  { method: 'get', path: '/api/user/:id', auth: 'admin', summary: 'One user', params: idPathParams, response: adminUserViewSchema },
] as const satisfies readonly ApiOperation[];
