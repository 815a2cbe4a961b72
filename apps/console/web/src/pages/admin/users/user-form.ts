import { adminUserCreateBody, type AdminUserView, adminUserUpdateBody, type ManageAction } from '@modelgate/schemas/api';
import { z } from 'zod';
import { quotaToUsd, usdToQuota } from '../../../lib/money';
import { ROLE, USER_STATUS } from '@modelgate/schemas/domain';

/** Admins type balances in USD; the API takes quota (docs/api.md 2.5: QuotaPerUnit of it per USD 1). */
const usdAmount = z.number({ error: 'Enter an amount in USD' }).min(0, 'Enter 0 or more').max(1_000_000_000, 'Enter at most 1,000,000,000');

export const userCreateFormSchema = adminUserCreateBody.omit({ quota: true }).extend({ quota_usd: usdAmount });
export type UserCreateFormInput = z.input<typeof userCreateFormSchema>;
export type UserCreateFormOutput = z.output<typeof userCreateFormSchema>;

export const userEditFormSchema = adminUserUpdateBody.omit({ id: true, quota: true }).extend({ quota_usd: usdAmount });
export type UserEditFormInput = z.input<typeof userEditFormSchema>;
export type UserEditFormOutput = z.output<typeof userEditFormSchema>;

export const USER_CREATE_DEFAULTS: UserCreateFormInput = { username: '', password: '', display_name: '', group: 'default', quota_usd: 0, role: ROLE.user };

export function userCreateBodyOf(values: UserCreateFormOutput, quotaPerUnit: number): z.input<typeof adminUserCreateBody> {
  const { quota_usd, ...fields } = values;
  return { ...fields, quota: usdToQuota(quota_usd, quotaPerUnit) };
}

export function userEditDefaults(user: AdminUserView, quotaPerUnit: number): UserEditFormInput {
  return { display_name: user.display_name, group: user.group, remark: user.remark, quota_usd: quotaToUsd(user.quota, quotaPerUnit) };
}

/**
 * The PUT body of an edit: `quota` only when the USD amount names another quota than the stored one
 * (so an untouched balance is not overwritten with what it was when the form opened); with
 * `quotaOnly` (root editing itself, docs/api.md 3.3) nothing else.
 */
export function userUpdateBodyOf(user: AdminUserView, values: UserEditFormOutput, quotaPerUnit: number, quotaOnly: boolean): z.input<typeof adminUserUpdateBody> {
  const { quota_usd, ...fields } = values;
  const quota = usdToQuota(quota_usd, quotaPerUnit);
  const quotaChange = quota === user.quota ? {} : { quota };
  return quotaOnly ? { id: user.id, ...quotaChange } : { id: user.id, ...fields, ...quotaChange };
}

export function roleLabel(role: number): string {
  if (role >= ROLE.root) return 'Root';
  if (role >= ROLE.admin) return 'Admin';
  return 'User';
}

export interface UserPermissions {
  /** Edit display name, group, quota and remark. */
  edit: boolean;
  /** Root on itself may set only its own quota. */
  quotaOnly: boolean;
  actions: ManageAction[];
  /** See and limit the user's API keys (docs/api.md 3.9.3). */
  keys: boolean;
}

/**
 * What `me` may do to `user` (docs/api.md 3.3): admins act on users of a lower role only, root on
 * anyone but itself; promote is root's; demote applies to admins.
 */
export function permissionsOf(me: { id: number; role: number }, user: AdminUserView): UserPermissions {
  const self = me.id === user.id;
  const canAct = !self && me.role > user.role;
  if (!canAct) return { edit: self && me.role >= ROLE.root, quotaOnly: true, actions: [], keys: false };
  const actions: ManageAction[] = [user.status === USER_STATUS.enabled ? 'disable' : 'enable'];
  if (user.role === ROLE.user && me.role >= ROLE.root) actions.push('promote');
  if (user.role === ROLE.admin) actions.push('demote');
  actions.push('delete');
  return { edit: true, quotaOnly: false, actions, keys: true };
}

export const MANAGE_ACTION_LABELS: Record<ManageAction, string> = {
  enable: 'Enable',
  disable: 'Disable',
  promote: 'Promote',
  demote: 'Demote',
  delete: 'Delete',
};

/** What the notice says after an action, after the username. */
export const MANAGE_ACTION_RESULTS: Record<ManageAction, string> = {
  enable: 'is enabled',
  disable: 'is disabled',
  promote: 'is now an admin',
  demote: 'is now a common user',
  delete: 'is deleted',
};
