import { changeBalance } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { LOG_TYPE, type ManageAction, ROLE, USER_STATUS } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { isUniqueViolation } from '../../lib/db';
import type { Page, PageRequest } from '../../lib/envelope';
import { publishInvalidation } from '../../lib/invalidation';
import { randomAlphanumeric } from '../../lib/random';
import { hashPassword } from '../auth/passwords';
import type { AuthenticatedUser } from '../auth/require-user';
import { AFF_CODE_LENGTH } from './fields';
import { findProfile, findProfilePage, insertUser, isUsernameOrEmailTaken, lockUser, updateUser } from './repository';
import { adminUserView } from './views';

type Target = { id: number; role: number };

/** docs/api.md 3.3: an admin acts only on users of a lower role; root on anyone but itself. */
function assertMayActOn(actor: AuthenticatedUser, target: Target): void {
  if (actor.role >= ROLE.root ? target.id === actor.id : target.role >= actor.role) {
    throw new AppError('forbidden', 'not allowed to manage this user');
  }
}

/** docs/api.md 3.7: root lists everyone; an admin only the users it may act on (lower roles). */
export async function listUsers(deps: AccountDeps, actor: AuthenticatedUser, page: PageRequest): Promise<Page<ReturnType<typeof adminUserView>>> {
  const belowRole = actor.role >= ROLE.root ? undefined : actor.role;
  const { total, rows } = await findProfilePage(deps.prisma, page.skip, page.pageSize, belowRole);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(adminUserView) };
}

export async function getUser(deps: AccountDeps, actor: AuthenticatedUser, id: number) {
  const user = await findProfile(deps.prisma, id);
  if (!user) throw new AppError('not_found', 'user not found');
  if (actor.id !== id) assertMayActOn(actor, user);
  return adminUserView(user);
}

export interface AdminUserUpdate {
  id: number;
  display_name?: string;
  group?: string;
  quota?: number;
  remark?: string;
  /** '' removes it (docs/api.md 3.9.1). */
  email?: string;
}

/** docs/api.md 3.8: root may set its own quota here (nothing else of its own: that is `PUT /api/user/self`). */
function isRootSettingOwnQuota(actor: AuthenticatedUser, input: AdminUserUpdate): boolean {
  const { id, quota, ...others } = input;
  return actor.role >= ROLE.root && id === actor.id && quota !== undefined && Object.values(others).every((value) => value === undefined);
}

/**
 * Edits a user; a quota change books its delta as one manage log row in the same transaction. An
 * email another user has is a 409.
 */
export async function updateUserAsAdmin(deps: AccountDeps, actor: AuthenticatedUser, input: AdminUserUpdate, requestId: string) {
  await deps.prisma.$transaction(async (tx) => {
    const target = await lockUser(tx, input.id);
    if (!target) throw new AppError('not_found', 'user not found');
    if (!isRootSettingOwnQuota(actor, input)) assertMayActOn(actor, target);
    const email = input.email === undefined ? undefined : input.email || null;
    await updateUser(tx, input.id, { displayName: input.display_name, group: input.group, remark: input.remark, email }).catch((err: unknown) => {
      throw isUniqueViolation(err) ? new AppError('conflict', 'email already taken', { param: 'email' }) : err;
    });
    const quota = input.quota === undefined ? undefined : BigInt(input.quota);
    // The row is locked, so the delta from the quota read above is exact.
    if (quota !== undefined && quota !== target.quota) {
      await changeBalance(tx, {
        userId: target.id,
        type: LOG_TYPE.manage,
        content: `quota set from ${target.quota} to ${quota} by ${actor.username}`,
        quota: quota - target.quota,
        requestId,
      });
    }
  });
  await publishInvalidation(deps, { kind: 'user', userId: input.id });
  return getUser(deps, actor, input.id);
}

export interface AdminUserCreation {
  username: string;
  password: string;
  display_name?: string;
  group?: string;
  quota?: number;
  /** ROLE.user (default) or ROLE.admin; the router refuses anything else. */
  role?: number;
}

/**
 * docs/api.md 3.8: creates a user (admins only from root); a starting quota is booked as one manage
 * log row in the same transaction as the user, so the ledger holds from its first row.
 */
export async function createUserAsAdmin(deps: AccountDeps, actor: AuthenticatedUser, input: AdminUserCreation, requestId: string) {
  const role = input.role ?? ROLE.user;
  if (role >= ROLE.admin && actor.role < ROLE.root) throw new AppError('forbidden', 'only root can create admins');
  if (await isUsernameOrEmailTaken(deps.prisma, input.username, undefined)) throw new AppError('conflict', 'username already taken');
  const passwordHash = await hashPassword(input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
  let id: number;
  try {
    id = await deps.prisma.$transaction(async (tx) => {
      const user = await insertUser(tx, {
        username: input.username,
        passwordHash,
        displayName: input.display_name,
        group: input.group,
        role,
        affCode: randomAlphanumeric(AFF_CODE_LENGTH),
      });
      if (input.quota) {
        await changeBalance(tx, {
          userId: user.id,
          type: LOG_TYPE.manage,
          content: `initial quota ${input.quota} set by ${actor.username}`,
          quota: BigInt(input.quota),
          requestId,
        });
      }
      return user.id;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('conflict', 'username already taken');
    throw err;
  }
  return getUser(deps, actor, id);
}

export async function manageUser(deps: AccountDeps, actor: AuthenticatedUser, id: number, action: ManageAction) {
  const result = await deps.prisma.$transaction(async (tx) => {
    const target = await lockUser(tx, id);
    if (!target) throw new AppError('not_found', 'user not found');
    assertMayActOn(actor, target);
    let { role, status } = target;
    switch (action) {
      case 'enable':
        status = USER_STATUS.enabled;
        break;
      case 'disable':
        status = USER_STATUS.disabled;
        break;
      case 'delete':
        // Soft delete: the ledger rows stay; disabled too, so anything checking only the status refuses it.
        await updateUser(tx, id, { deletedAt: new Date(nowMs(deps)), status: USER_STATUS.disabled, accessTokenHash: null });
        return { role, status, deleted: true };
      case 'promote':
        if (actor.role < ROLE.root) throw new AppError('forbidden', 'only root can promote users');
        if (role >= ROLE.admin) throw new AppError('invalid_request', 'user is already an admin');
        role = ROLE.admin;
        break;
      case 'demote':
        if (role >= ROLE.root) throw new AppError('forbidden', 'root cannot be demoted');
        if (role <= ROLE.user) throw new AppError('invalid_request', 'user is already a common user');
        role = ROLE.user;
        break;
    }
    await updateUser(tx, id, { role, status });
    return { role, status, deleted: false };
  });
  await publishInvalidation(deps, { kind: 'user', userId: id });
  return result.deleted ? null : { role: result.role, status: result.status };
}
