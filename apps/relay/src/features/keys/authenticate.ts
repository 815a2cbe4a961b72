import { sha256Hex } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import type { IncomingHttpHeaders } from 'node:http';
import { ipAllowed, TOKEN_STATUS, USER_STATUS } from '@modelgate/schemas';
import { type KeyCache, type KeyRecord, type UserRecord } from './key-cache';

/** Who is calling: the key, its owner, and the group that prices and routes the call. */
export interface AuthContext {
  key: KeyRecord;
  user: UserRecord;
  group: string;
}

const KEY_FORMAT = /^sk-[A-Za-z0-9]{48}$/;

/** What the key check reads: an Express request, or a relayed call served directly (see direct-routes). */
export interface KeyRequest {
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
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

/** Where a route reads the client's key: its SDK's places (docs/api.md 2). */
export type KeyDialect = 'openai' | 'google' | 'anthropic';

function headerValue(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

/**
 * The client's key: OpenAI routes read `Authorization: Bearer`; Gemini routes also accept
 * `x-goog-api-key` and `?key=`; Anthropic routes `x-api-key` (query strings ignored: Claude Code
 * sends `?beta=true`). The `sk-` prefix is optional (Google SDKs send keys as given).
 */
export function extractKey(req: KeyRequest, dialect: KeyDialect): string | undefined {
  let key = bearer(req.headers.authorization);
  if (dialect === 'google') {
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
  return { key, user, group: key.group || user.group };
}

/** First check of every relay route (docs/api.md 1.3): a valid, enabled, funded key of an enabled user. */
export function authenticate(cache: KeyCache, dialect: KeyDialect) {
  return (req: KeyRequest, res: WithLocals, next: (err?: unknown) => void): void => {
    const key = extractKey(req, dialect);
    if (!key || !KEY_FORMAT.test(key)) {
      next(new AppError('invalid_api_key', key ? 'invalid API key' : 'missing API key'));
      return;
    }
    const resolved = cache.resolve(sha256Hex(key));
    if (resolved instanceof Promise) {
      resolved.then(
        (value) => {
          res.locals.auth = check(value);
          next();
        },
        (err: unknown) => next(new AppError('service_unavailable', 'API key lookup is unavailable', { cause: err })),
      ).catch(next);
      return;
    }
    try {
      res.locals.auth = check(resolved);
      next();
    } catch (err) {
      next(err);
    }
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
