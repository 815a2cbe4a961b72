import { Prisma, type TokenModel } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import {
  ADMIN_LIMIT_FIELDS,
  type BudgetPeriod,
  effectiveTokenStatus,
  parseIpAllowList,
  readOptions,
  ROLE,
  TOKEN_STATUS,
  type TokenView,
} from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { nowMs, unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { publishInvalidation } from '../../lib/invalidation';
import type { AuthenticatedUser } from '../auth/require-user';
import { findActiveUserById } from '../users/repository';
import { budgetUsedNow } from './budget-period';
import { generateApiKey, maskedKey } from './keys';
import { deleteOwnToken, findToken, findTokenPageOfUser, insertToken, lockTokenOfUser, updateTokenById } from './repository';

const NEVER = -1;

function tokenView(token: TokenModel, now: number): TokenView {
  return {
    id: token.id,
    user_id: token.userId,
    name: token.name,
    key: maskedKey(token.keyPrefix, token.keySuffix),
    // As the relay will treat the key now: an enabled key past its expiry or quota shows as such.
    status: effectiveTokenStatus(token, now),
    created_at: unixSeconds(token.createdAt),
    accessed_at: unixSeconds(token.accessedAt),
    expired_time: token.expiresAt ? unixSeconds(token.expiresAt) : NEVER,
    remain_quota: Number(token.remainQuota),
    used_quota: Number(token.usedQuota),
    unlimited_quota: token.unlimitedQuota,
    model_limits_enabled: token.modelLimitsEnabled,
    model_limits: token.modelLimits,
    allow_ips: token.allowIps,
    group: token.group,
    rpm_limit: token.rpmLimit,
    tpm_limit: token.tpmLimit,
    max_concurrency: token.maxConcurrency,
    budget_usd: token.budgetUsd === null ? null : token.budgetUsd.toNumber(),
    budget_period: token.budgetPeriod as BudgetPeriod,
    budget_used_quota: budgetUsedNow(token, now),
    limits_set_by_admin: token.limitsSetBy !== null,
  };
}

export interface TokenFields {
  name?: string;
  remain_quota?: number;
  unlimited_quota?: boolean;
  expired_time?: number;
  model_limits_enabled?: boolean;
  model_limits?: string;
  allow_ips?: string;
  group?: string;
  rpm_limit?: number;
  tpm_limit?: number;
  max_concurrency?: number;
  budget_usd?: number | null;
  budget_period?: BudgetPeriod;
}

/** The user whose keys are edited: a key's group is judged by its owner, whoever edits it. */
type KeyOwner = Pick<AuthenticatedUser, 'id' | 'role' | 'group'>;

/** Validated column values for the fields present. */
async function columnsOf(deps: AccountDeps, owner: KeyOwner, input: TokenFields) {
  const now = nowMs(deps);
  let expiresAt: Date | null | undefined;
  if (input.expired_time !== undefined) {
    if (input.expired_time === NEVER) expiresAt = null;
    else if (input.expired_time * 1000 <= now) {
      throw new AppError('invalid_request', 'expired_time: must be in the future, or -1 for never', { param: 'expired_time' });
    } else expiresAt = new Date(input.expired_time * 1000);
  }
  let allowIps: string | undefined;
  if (input.allow_ips !== undefined) {
    try {
      allowIps = parseIpAllowList(input.allow_ips).entries.join('\n');
    } catch (err) {
      throw new AppError('invalid_request', `allow_ips: ${(err as Error).message}`, { param: 'allow_ips' });
    }
  }
  if (input.group) await assertGroupUsable(deps, owner, input.group);
  return {
    name: input.name,
    remainQuota: input.remain_quota === undefined ? undefined : BigInt(input.remain_quota),
    unlimitedQuota: input.unlimited_quota,
    expiresAt,
    modelLimitsEnabled: input.model_limits_enabled,
    modelLimits: input.model_limits,
    allowIps,
    group: input.group,
    rpmLimit: input.rpm_limit,
    tpmLimit: input.tpm_limit,
    maxConcurrency: input.max_concurrency,
    budgetUsd: input.budget_usd === undefined || input.budget_usd === null ? input.budget_usd : new Prisma.Decimal(input.budget_usd),
    budgetPeriod: input.budget_period,
  };
}

/** A key's group picks channels and prices: users may only use their own; admins any priced group. */
async function assertGroupUsable(deps: AccountDeps, owner: KeyOwner, group: string): Promise<void> {
  if (group === owner.group) return;
  if (owner.role >= ROLE.admin && (await readOptions(deps.prisma)).GroupRatio.has(group)) return;
  throw new AppError('invalid_request', `group: "${group}" is not available to the key's owner`, { param: 'group' });
}

/**
 * The owner of `userId`'s keys as `actor` may reach them: itself, or for an admin a user of a lower
 * role (docs/api.md 3.9.3); undefined otherwise.
 */
async function reachableOwner(deps: AccountDeps, actor: AuthenticatedUser, userId: number): Promise<KeyOwner | undefined> {
  if (userId === actor.id) return actor;
  if (actor.role < ROLE.admin) return undefined;
  const owner = await findActiveUserById(deps.prisma, userId);
  return owner && owner.role < actor.role ? owner : undefined;
}

/** The token and its owner, when `actor` may reach them; otherwise 404, as for an unknown id. */
async function reachableToken(deps: AccountDeps, actor: AuthenticatedUser, id: number) {
  const token = await findToken(deps.prisma, id);
  const owner = token && (await reachableOwner(deps, actor, token.userId));
  if (!token || !owner) throw new AppError('not_found', 'token not found');
  return { token, owner };
}

const OWNER_LOWERABLE = { rpm_limit: 'rpmLimit', tpm_limit: 'tpmLimit', max_concurrency: 'maxConcurrency' } as const;

/**
 * While an admin's limits hold (docs/api.md 3.9.3), the owner may only tighten them: a limit stays
 * above 0 (none) and at most its value, a budget stays set and at most its value, the period stays.
 */
function assertOnlyTightened(current: TokenModel, input: TokenFields): void {
  const refuse = (field: string, rule: string): never => {
    throw new AppError('forbidden', `${field}: an admin set this key's limits; ${rule}`, { param: field });
  };
  for (const field of Object.keys(OWNER_LOWERABLE) as (keyof typeof OWNER_LOWERABLE)[]) {
    const next = input[field];
    const limit = current[OWNER_LOWERABLE[field]];
    if (next !== undefined && limit > 0 && (next === 0 || next > limit)) refuse(field, `you may only lower it (1 to ${limit})`);
  }
  const budget = current.budgetUsd;
  if (input.budget_usd !== undefined && budget !== null && (input.budget_usd === null || budget.lessThan(input.budget_usd))) {
    refuse('budget_usd', `you may only lower it (0 to ${budget.toNumber()})`);
  }
  if (input.budget_period !== undefined && input.budget_period !== current.budgetPeriod) refuse('budget_period', 'you may not change it');
}

export async function createToken(deps: AccountDeps, user: AuthenticatedUser, input: TokenFields & { name: string }) {
  const columns = await columnsOf(deps, user, input);
  const generated = generateApiKey();
  const token = await insertToken(deps.prisma, {
    ...columns,
    name: input.name,
    // A key created without any quota setting is usable: unlimited unless a remain_quota was given.
    unlimitedQuota: columns.unlimitedQuota ?? input.remain_quota === undefined,
    userId: user.id,
    keyHash: generated.keyHash,
    keyPrefix: generated.keyPrefix,
    keySuffix: generated.keySuffix,
  });
  // A relay may have cached this hash as unknown: let it look again.
  await publishInvalidation(deps, { kind: 'token', tokenId: token.id, keyHash: token.keyHash });
  return { ...tokenView(token, nowMs(deps)), key: generated.key };
}

/** The caller's keys, or with `userId` an admin's view of a lower-role user's keys. */
export async function listTokens(deps: AccountDeps, actor: AuthenticatedUser, userId: number | undefined, page: PageRequest): Promise<Page<TokenView>> {
  if (userId !== undefined && userId !== actor.id && actor.role < ROLE.admin) {
    throw new AppError('forbidden', "user_id: only admins may list another user's keys", { param: 'user_id' });
  }
  const owner = await reachableOwner(deps, actor, userId ?? actor.id);
  if (!owner) throw new AppError('not_found', 'user not found');
  const { total, rows } = await findTokenPageOfUser(deps.prisma, owner.id, page.skip, page.pageSize);
  const now = nowMs(deps);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map((row) => tokenView(row, now)) };
}

export async function getToken(deps: AccountDeps, actor: AuthenticatedUser, id: number) {
  const { token } = await reachableToken(deps, actor, id);
  return tokenView(token, nowMs(deps));
}

export async function updateToken(deps: AccountDeps, actor: AuthenticatedUser, id: number, input: TokenFields & { status?: number }) {
  const { owner } = await reachableToken(deps, actor, id);
  const columns = await columnsOf(deps, owner, input);
  const adminForOwner = owner.id !== actor.id;
  const updated = await deps.prisma.$transaction(async (tx) => {
    const current = await lockTokenOfUser(tx, owner.id, id);
    if (!current) throw new AppError('not_found', 'token not found');
    // Admins edit their own keys freely, whoever set the limits (only an admin reaches another's key).
    if (actor.role < ROLE.admin && current.limitsSetBy !== null) assertOnlyTightened(current, input);
    if (input.status === TOKEN_STATUS.enabled) {
      const candidate = { ...current, ...stripUndefined(columns), status: TOKEN_STATUS.enabled } as TokenModel;
      const status = effectiveTokenStatus(candidate, nowMs(deps));
      if (status === TOKEN_STATUS.expired) {
        throw new AppError('invalid_request', 'status: the key has expired; set a later expired_time to enable it', { param: 'status' });
      }
      if (status === TOKEN_STATUS.exhausted) {
        throw new AppError('invalid_request', 'status: the key has no quota left; raise remain_quota to enable it', { param: 'status' });
      }
    }
    const setsLimits = adminForOwner && ADMIN_LIMIT_FIELDS.some((field) => input[field] !== undefined);
    return updateTokenById(tx, id, { ...columns, status: input.status, ...(setsLimits ? { limitsSetBy: actor.id } : {}) });
  });
  // The relays drop the cached key and read its new limits from the database.
  await publishInvalidation(deps, { kind: 'token', tokenId: id, keyHash: updated.keyHash });
  return tokenView(updated, nowMs(deps));
}

export async function deleteToken(deps: AccountDeps, userId: number, id: number): Promise<void> {
  const deleted = await deleteOwnToken(deps.prisma, userId, id);
  if (!deleted) throw new AppError('not_found', 'token not found');
  await publishInvalidation(deps, { kind: 'token', tokenId: id, keyHash: deleted.key_hash });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
