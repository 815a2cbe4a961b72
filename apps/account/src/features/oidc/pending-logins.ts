import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AccountDeps } from '../../deps';
import { cookieValue } from '../auth/session-store';

/** A sign-in started at the provider and not yet back: what the callback must check and use. */
export interface PendingLogin {
  nonce: string;
  codeVerifier: string;
  /** Local path to land on afterwards. */
  next: string;
  /** The provider it was started with: a change of the options in between voids it. */
  issuer: string;
  clientId: string;
}

interface StoredLogin extends PendingLogin {
  /** SHA-256 of the browser cookie's value. */
  browser: string;
}

/** The browser that started the sign-in carries this cookie back to the callback. */
export const OIDC_BROWSER_COOKIE = 'oidc_browser';
const PENDING_TTL_SECONDS = 10 * 60;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const keyOf = (deps: AccountDeps, state: string) => `${deps.env.REDIS_PREFIX}oidc:state:${sha256(state)}`;

function cookieOptions(deps: AccountDeps) {
  // Lax: the provider sends the browser back with a top-level GET, which carries Lax cookies.
  return { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: deps.env.COOKIE_SECURE };
}

/**
 * Keeps a pending sign-in under its `state` in Redis for 10 minutes and binds it to this browser
 * with a random cookie: a state replayed, or carried to another browser (login CSRF), finds nothing.
 */
export async function savePendingLogin(deps: AccountDeps, res: Response, state: string, login: PendingLogin): Promise<void> {
  const browser = randomBytes(32).toString('base64url');
  const stored: StoredLogin = { ...login, browser: sha256(browser) };
  await deps.redis.set(keyOf(deps, state), JSON.stringify(stored), 'EX', PENDING_TTL_SECONDS);
  res.cookie(OIDC_BROWSER_COOKIE, browser, { ...cookieOptions(deps), maxAge: PENDING_TTL_SECONDS * 1000 });
}

/**
 * Takes the pending sign-in of `state` (read and deleted in one step, so it is used at most once)
 * and clears the cookie. Undefined when there is none, or when this browser did not start it.
 */
export async function takePendingLogin(deps: AccountDeps, req: Request, res: Response, state: string | undefined): Promise<PendingLogin | undefined> {
  res.clearCookie(OIDC_BROWSER_COOKIE, cookieOptions(deps));
  if (!state) return undefined;
  const raw = await deps.redis.getdel(keyOf(deps, state));
  const browser = cookieValue(req.headers.cookie, OIDC_BROWSER_COOKIE);
  if (!raw || !browser) return undefined;
  const { browser: expected, ...login } = JSON.parse(raw) as StoredLogin;
  const given = Buffer.from(sha256(browser));
  return given.length === expected.length && timingSafeEqual(given, Buffer.from(expected)) ? login : undefined;
}
