import type { TokenModel } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { effectiveTokenStatus, parseIpAllowList, readOptions, ROLE, TOKEN_STATUS, type TokenView } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { nowMs, unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { publishInvalidation } from '../../lib/invalidation';
import type { AuthenticatedUser } from '../auth/require-user';
import { generateApiKey, maskedKey } from './keys';
import { deleteOwnToken, findOwnToken, findOwnTokenPage, insertToken, updateOwnToken } from './repository';

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
}

/** Validated column values for the fields present. */
async function columnsOf(deps: AccountDeps, user: AuthenticatedUser, input: TokenFields) {
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
  if (input.group) await assertGroupUsable(deps, user, input.group);
  return {
    name: input.name,
    remainQuota: input.remain_quota === undefined ? undefined : BigInt(input.remain_quota),
    unlimitedQuota: input.unlimited_quota,
    expiresAt,
    modelLimitsEnabled: input.model_limits_enabled,
    modelLimits: input.model_limits,
    allowIps,
    group: input.group,
  };
}

/** A key's group picks channels and prices: users may only use their own; admins any priced group. */
async function assertGroupUsable(deps: AccountDeps, user: AuthenticatedUser, group: string): Promise<void> {
  if (group === user.group) return;
  if (user.role >= ROLE.admin && (await readOptions(deps.prisma)).GroupRatio.has(group)) return;
  throw new AppError('invalid_request', `group: "${group}" is not available to this user`, { param: 'group' });
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

export async function listTokens(deps: AccountDeps, userId: number, page: PageRequest): Promise<Page<TokenView>> {
  const { total, rows } = await findOwnTokenPage(deps.prisma, userId, page.skip, page.pageSize);
  const now = nowMs(deps);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map((row) => tokenView(row, now)) };
}

export async function getToken(deps: AccountDeps, userId: number, id: number) {
  const token = await findOwnToken(deps.prisma, userId, id);
  if (!token) throw new AppError('not_found', 'token not found');
  return tokenView(token, nowMs(deps));
}

export async function updateToken(deps: AccountDeps, user: AuthenticatedUser, id: number, input: TokenFields & { status?: number }) {
  const current = await findOwnToken(deps.prisma, user.id, id);
  if (!current) throw new AppError('not_found', 'token not found');
  const columns = await columnsOf(deps, user, input);
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
  const updated = await updateOwnToken(deps.prisma, user.id, id, { ...columns, status: input.status });
  if (!updated) throw new AppError('not_found', 'token not found');
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
