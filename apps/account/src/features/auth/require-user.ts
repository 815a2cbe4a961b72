import { sha256Hex } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import { ROLE, USER_STATUS } from '@modelgate/schemas';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AccountDeps } from '../../deps';
import { findActiveUserById, findUserIdByAccessTokenHash } from '../users/repository';
import { sessionStoreOf } from './sessions';

export interface AuthenticatedUser {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireUser`: the caller, with role and status as stored right now. */
      user?: AuthenticatedUser;
    }
  }
}

const USER_ID_HEADER = /^[1-9][0-9]{0,9}$/;
const BEARER = /^Bearer\s+(\S+)$/i;

export function hashAccessToken(token: string): string {
  return sha256Hex(token);
}

export interface Caller {
  userId: number;
  /** Set for session logins: when the session was issued (ms). */
  sessionIssuedAt?: number;
}

/** The caller by a fully logged-in session (its expiry slid along); undefined without one. */
export async function sessionCaller(deps: AccountDeps, req: Request, res: Response): Promise<Caller | undefined> {
  const sessions = sessionStoreOf(deps);
  const session = await sessions.load(req);
  if (!session?.data.userId) return undefined;
  sessions.setCookie(res, session.id);
  return { userId: session.data.userId, sessionIssuedAt: session.data.issuedAt ?? 0 };
}

/** The caller by access token or by fully logged-in session; undefined when neither holds. */
async function authenticatedCaller(deps: AccountDeps, req: Request, res: Response): Promise<Caller | undefined> {
  const bearerToken = BEARER.exec(req.headers.authorization ?? '')?.[1];
  if (bearerToken !== undefined) {
    const userId = await findUserIdByAccessTokenHash(deps.prisma, hashAccessToken(bearerToken));
    return userId === undefined ? undefined : { userId };
  }
  return sessionCaller(deps, req, res);
}

/**
 * The caller's user with role and status as stored right now: 401 when it is gone or the session
 * predates a password change, 403 when disabled.
 */
export async function storedUserOf(deps: AccountDeps, caller: Caller): Promise<AuthenticatedUser> {
  const found = await findActiveUserById(deps.prisma, caller.userId);
  if (!found) throw new AppError('unauthorized', 'not logged in');
  const { passwordChangedAt, ...user } = found;
  if (caller.sessionIssuedAt !== undefined && passwordChangedAt && caller.sessionIssuedAt < passwordChangedAt.getTime()) {
    throw new AppError('unauthorized', 'session ended by a password change: log in again');
  }
  if (user.status !== USER_STATUS.enabled) throw new AppError('user_disabled', 'user is disabled');
  return user;
}

/**
 * Authenticates by `Authorization: Bearer <access token>` or the session cookie, enforces the
 * `New-Api-User` guard (docs/api.md 1.2), and reads role and status from the database on every call so a
 * disabled or demoted user loses access at once. 401 unauthenticated, 403 disabled or role too low.
 */
export function requireUser(deps: AccountDeps, minRole: number = ROLE.user): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    (async () => {
      const caller = await authenticatedCaller(deps, req, res);
      if (caller === undefined) throw new AppError('unauthorized', 'not logged in');
      const { userId } = caller;
      const claimed = req.headers['new-api-user'];
      if (typeof claimed !== 'string' || !USER_ID_HEADER.test(claimed) || Number(claimed) !== userId) {
        throw new AppError('unauthorized', 'New-Api-User header missing or not matching the logged-in user');
      }
      const user = await storedUserOf(deps, caller);
      if (user.role < minRole) throw new AppError('forbidden', 'insufficient role');
      req.user = user;
    })().then(() => next(), next);
  };
}

/** The caller set by `requireUser`; a route without that middleware is a programming error. */
export function currentUser(req: Request): AuthenticatedUser {
  if (!req.user) throw new Error('route is missing requireUser');
  return req.user;
}
