import { sha256Hex } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import type { IncomingHttpHeaders } from 'node:http';
import { type Dialect, ipAllowed, ROLE, TOKEN_STATUS, USER_STATUS } from '@modelgate/schemas';
import type { KeyFailureLimit } from './failure-limit';
import { type KeyCache, type KeyRecord, type ResolvedKey, type UserRecord } from './key-cache';

/** Who is calling: the key, its owner, and the group that prices and routes the call. */
export interface AuthContext {
  key: KeyRecord;
  user: UserRecord;
  group: string;
}

const KEY_FORMAT = /^sk-[A-Za-z0-9]{48}$/;

/** What the key check reads: an Express request, or a relayed call served directly (see withFastPath in @modelgate/http). */
export interface KeyRequest {
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  /** The client address (from the edge's X-Forwarded-For): failed key checks are counted per address. */
  ip?: string | undefined;
}

/** Where the accepted key is kept for the rest of the request (Express's `res.locals`). */
export interface WithLocals {
  locals: Record<string, unknown>;
}

function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

/**
 * The client's key: OpenAI routes read `Authorization: Bearer`; Gemini routes also accept
 * `x-goog-api-key` and `?key=`; Anthropic routes `x-api-key` (query strings ignored: Claude Code
 * sends `?beta=true`). The `sk-` prefix is optional (Google SDKs send keys as given).
 */
export function extractKey(req: KeyRequest, dialect: Dialect): string | undefined {
  let key = bearer(req.headers.authorization);
  if (dialect === 'gemini') {
    const query = req.query.key;
    key = headerValue(req.headers['x-goog-api-key']) ?? ((typeof query === 'string' && query) || key);
  } else if (dialect === 'anthropic') {
    key = headerValue(req.headers['x-api-key']) ?? key;
  }
  if (!key) return undefined;
  return key.startsWith('sk-') ? key : `sk-${key}`;
}

export function authContextOf(res: WithLocals): AuthContext {
  return res.locals.auth as AuthContext;
}

function check(resolved: { key: KeyRecord; user: UserRecord } | null): AuthContext {
  if (!resolved) throw new AppError('invalid_api_key', 'invalid API key');
  const { key, user } = resolved;
  if (key.status === TOKEN_STATUS.disabled) throw new AppError('invalid_api_key', 'API key is disabled');
  if (key.status === TOKEN_STATUS.expired || (key.expiresAt !== null && key.expiresAt <= Date.now())) {
    throw new AppError('invalid_api_key', 'API key has expired');
  }
  if (key.status === TOKEN_STATUS.exhausted || (!key.unlimitedQuota && key.remainQuota <= 0)) {
    throw new AppError('invalid_api_key', 'API key quota is exhausted');
  }
  if (key.status !== TOKEN_STATUS.enabled) throw new AppError('invalid_api_key', 'API key is not enabled');
  if (user.status !== USER_STATUS.enabled) throw new AppError('user_disabled', 'the owner of this API key is disabled');
  // A key's own group is honoured only while its owner may still choose it (admins): a key made in
  // `vip` stops there once its owner is moved to another group or demoted (docs/api.md 3.7).
  if (key.group && key.group !== user.group && user.role < ROLE.admin) {
    throw new AppError('group_not_allowed', `this API key's group "${key.group}" is not available to its owner, whose group is "${user.group}"`);
  }
  return { key, user, group: key.group || user.group };
}

type Next = (err?: unknown) => void;

/** The failed checks counted against the client address (docs/api.md 3.7): no such key, or a disabled one. */
function isGuess(resolved: ResolvedKey | null): boolean {
  return resolved === null || resolved.key.status === TOKEN_STATUS.disabled;
}

/** Answers a counted failure with its own error, or with 429 once the address is past its limit. */
function refuseCounted(failures: KeyFailureLimit, req: KeyRequest, err: unknown, next: Next): void {
  failures.count(req.ip).then(() => next(err), next);
}

/**
 * Looks a key not in memory up in the database once the address is admitted. The lookup counts as
 * a failure before it starts, so concurrent guesses from one address cannot run more lookups than
 * the limit; requests presenting the same key at once share one admission and one lookup. The point
 * is given back when the key is good or the lookup could not run.
 */
function lookUp(cache: KeyCache, failures: KeyFailureLimit, keyHash: string, ip: string | undefined): Promise<ResolvedKey | null> {
  // Set only for the request whose admission the lookup waited for (the others' never runs).
  let admitted = false;
  return cache
    .load(keyHash, async () => {
      admitted = await failures.admit(ip);
    })
    .then(
      (resolved) => {
        if (admitted && !isGuess(resolved)) failures.refund(ip);
        return resolved;
      },
      (err: unknown) => {
        if (err instanceof AppError) throw err;
        if (admitted) failures.refund(ip);
        throw new AppError('service_unavailable', 'API key lookup is unavailable', { cause: err });
      },
    );
}

/** `counted`: the failure, if it is one, was already counted (a database lookup's admission). */
function accept(resolved: ResolvedKey | null, failures: KeyFailureLimit, req: KeyRequest, res: WithLocals, next: Next, counted = false): void {
  let auth: AuthContext;
  try {
    auth = check(resolved);
  } catch (err) {
    if (isGuess(resolved) && !counted) refuseCounted(failures, req, err, next);
    else next(err);
    return;
  }
  res.locals.auth = auth;
  next();
}

/**
 * First check of every relay route (docs/api.md 1.3): a valid, enabled, funded key of an enabled
 * user. A key held in memory costs no I/O. Failed checks (a malformed, unknown or disabled key) are
 * counted per client address; past the limit, a key not in memory is refused with 429 before any
 * database lookup (docs/api.md 3.7).
 */
export function authenticate(cache: KeyCache, failures: KeyFailureLimit, dialect: Dialect) {
  return (req: KeyRequest, res: WithLocals, next: Next): void => {
    const key = extractKey(req, dialect);
    if (!key) {
      next(new AppError('invalid_api_key', 'missing API key'));
      return;
    }
    if (!KEY_FORMAT.test(key)) {
      refuseCounted(failures, req, new AppError('invalid_api_key', 'invalid API key'), next);
      return;
    }
    const keyHash = sha256Hex(key);
    const cached = cache.cached(keyHash);
    if (cached !== undefined) {
      accept(cached, failures, req, res, next);
      return;
    }
    lookUp(cache, failures, keyHash, req.ip).then((resolved) => accept(resolved, failures, req, res, next, true), next);
  };
}

/** The key's model and IP allow-lists (checked after the body, docs/api.md 1.3). */
export function checkAllowLists(auth: AuthContext, model: string, clientIp: string | undefined): void {
  if (auth.key.modelLimits && !auth.key.modelLimits.has(model)) {
    throw new AppError('model_not_allowed', `this API key may not use model ${model}`);
  }
  checkIpAllowed(auth, clientIp);
}

/** The key's IP allow-list alone (model lists answer whatever model the key may use). */
export function checkIpAllowed(auth: AuthContext, clientIp: string | undefined): void {
  if (auth.key.allowIps && !ipAllowed(auth.key.allowIps, clientIp)) {
    throw new AppError('ip_not_allowed', `this API key may not be used from ${clientIp ?? 'this address'}`);
  }
}
