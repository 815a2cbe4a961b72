import { randomBytes } from 'node:crypto';
import { AppError } from '@modelgate/errors';
import { describeError } from '@modelgate/http';
import { addressLimitKey, oidcCallbackQuery, type OidcErrorCode, type OptionValues, readOptions, type SessionUser, USER_STATUS } from '@modelgate/schemas';
import type { Request, Response } from 'express';
import * as oidc from 'openid-client';
import type { AccountDeps } from '../../deps';
import { isUniqueViolation } from '../../lib/db';
import { hashPassword } from '../auth/passwords';
import { consumeOrThrow, rateLimitsOf } from '../auth/rate-limits';
import { sessionCaller, storedUserOf } from '../auth/require-user';
import { createUserWithBonus, startSession } from '../auth/service';
import { savePendingLogin, takePendingLogin } from './pending-logins';
import { displayNameOf, type IdentityClaims, suffixedUsername, usernameBase, verifiedEmail } from './profile';
import { configurationOf, forgetConfiguration, oidcSettingsOf, type OidcSettings } from './provider';
import { findIdentityUser, insertIdentity, isEmailTaken, isUsernameTaken } from './repository';

/** Why a sign-in failed: the browser lands on `/login?error=<reason>`; the message is for the log. */
export class OidcSignInError extends Error {
  constructor(
    readonly reason: OidcErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OidcSignInError';
  }
}

const SCOPE = 'openid email profile';
const CALLBACK_PATH = '/api/oauth/oidc/callback';
/** Tries of a name with a random suffix after the provider's name is taken. */
const USERNAME_TRIES = 6;
const MAX_NEXT_LENGTH = 2048;
/** A path of this site: one `/` then not `/` or `\`, printable ASCII without `\` (browsers read it as `/`). */
const LOCAL_PATH = /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/;

/** `next` when it is a local path (docs/api.md 3.9.2), else `/`: never another site's address. */
export function localPath(next: unknown): string {
  return typeof next === 'string' && next.length <= MAX_NEXT_LENGTH && LOCAL_PATH.test(next) ? next : '/';
}

function configuredSettings(options: OptionValues): OidcSettings {
  const settings = oidcSettingsOf(options);
  if (!settings) throw new OidcSignInError('sso_disabled', 'OpenID Connect sign-in is off or not configured');
  return settings;
}

async function providerConfiguration(deps: AccountDeps, settings: OidcSettings): Promise<oidc.Configuration> {
  try {
    return await configurationOf(deps, settings);
  } catch (err) {
    throw new OidcSignInError('sso_unavailable', `discovery of ${settings.issuer} failed`, { cause: err });
  }
}

/** `GET /api/oauth/oidc/login`: the provider's authorization URL for a new code flow with PKCE. */
export async function startOidcLogin(deps: AccountDeps, req: Request, res: Response, next: string): Promise<string> {
  await consumeOrThrow(rateLimitsOf(deps).loginByIp, addressLimitKey(req.ip));
  const options = await readOptions(deps.prisma);
  const settings = configuredSettings(options);
  const configuration = await providerConfiguration(deps, settings);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  await savePendingLogin(deps, res, state, { nonce, codeVerifier, next, issuer: settings.issuer, clientId: settings.clientId });
  return oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: `${options.ServerAddress}${CALLBACK_PATH}`,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  }).href;
}

/**
 * `GET /api/oauth/oidc/callback`: checks the state, exchanges the code, validates the ID token,
 * finds or creates the user and starts its session. Returns where the browser goes next.
 */
export async function finishOidcLogin(deps: AccountDeps, req: Request, res: Response): Promise<string> {
  const query = oidcCallbackQuery.safeParse(req.query).data ?? {};
  // Taken first, whatever follows: a state is good for one answer of the provider.
  const pending = await takePendingLogin(deps, req, res, query.state);
  if (query.error !== undefined) {
    throw new OidcSignInError(query.error === 'access_denied' ? 'access_denied' : 'provider_error', `the provider answered error=${query.error.slice(0, 100)}`);
  }
  if (!pending || query.state === undefined) throw new OidcSignInError('invalid_state', 'state unknown, expired, used, or started in another browser');
  const options = await readOptions(deps.prisma);
  const settings = configuredSettings(options);
  if (settings.issuer !== pending.issuer || settings.clientId !== pending.clientId) {
    throw new OidcSignInError('invalid_state', 'the provider settings changed during the sign-in');
  }
  const configuration = await providerConfiguration(deps, settings);
  const callbackUrl = new URL(`${options.ServerAddress}${CALLBACK_PATH}`);
  callbackUrl.search = new URL(req.originalUrl, callbackUrl).search;
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: query.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
  } catch (err) {
    // Possibly stale metadata or keys: the next sign-in discovers the provider again.
    forgetConfiguration(deps);
    throw new OidcSignInError('invalid_token', 'code exchange or ID token validation failed', { cause: err });
  }
  const claims = tokens.claims();
  if (!claims) throw new OidcSignInError('invalid_token', 'no ID token');
  const user = await findOrCreateUser(deps, req, options, configuration, tokens.access_token, claims);
  if (user.deletedAt !== null || user.status !== USER_STATUS.enabled) throw new OidcSignInError('user_disabled', `user ${user.id} is disabled or deleted`);
  const address = options.ServerAddress;
  if ((await startSession(deps, req, res, user.id)) === 'second-factor') {
    return `${address}/sign-in?step=2fa${pending.next === '/' ? '' : `&next=${encodeURIComponent(pending.next)}`}`;
  }
  return `${address}${pending.next}`;
}

interface IdentityUser {
  id: number;
  status: number;
  deletedAt: Date | null;
}

/**
 * The user of (issuer, sub), or a new one made from the claims. Accounts are never joined by email:
 * an address someone else's provider vouches for must not open an existing account.
 */
async function findOrCreateUser(
  deps: AccountDeps,
  req: Request,
  options: OptionValues,
  configuration: oidc.Configuration,
  accessToken: string,
  idToken: oidc.IDToken,
): Promise<IdentityUser> {
  const { iss: issuer, sub: subject } = idToken;
  const found = await findIdentityUser(deps.prisma, issuer, subject);
  if (found) return found;
  const claims = await profileClaims(configuration, accessToken, idToken);
  const base = usernameBase(claims);
  let email = verifiedEmail(claims);
  const passwordHash = await hashPassword(randomBytes(32).toString('base64url'), deps.env.PASSWORD_HASH_MEMORY_KIB);
  for (let attempt = 0; attempt < USERNAME_TRIES; attempt++) {
    const username = attempt === 0 ? base : suffixedUsername(base);
    if (await isUsernameTaken(deps.prisma, username)) continue;
    if (email !== undefined && (await isEmailTaken(deps.prisma, email))) email = undefined;
    try {
      const user = await deps.prisma.$transaction(async (tx) => {
        const created = await createUserWithBonus(tx, {
          username,
          // Nobody knows this password: the account signs in through its provider (or a reset mail).
          passwordHash,
          email,
          displayName: displayNameOf(claims),
          bonus: BigInt(options.QuotaForNewUser),
          bonusContent: 'registration bonus (single sign-on)',
          requestId: req.requestId,
        });
        await insertIdentity(tx, created.id, issuer, subject);
        return created;
      });
      deps.logger.info({ requestId: req.requestId, userId: user.id, username: user.username }, 'user created by OpenID Connect sign-in');
      return { id: user.id, status: USER_STATUS.enabled, deletedAt: null };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      // A second callback of the same person won the race, or the name or email was taken meanwhile.
      const raced = await findIdentityUser(deps.prisma, issuer, subject);
      if (raced) return raced;
    }
  }
  throw new Error(`no free username for "${base}" after ${USERNAME_TRIES} tries`);
}

/**
 * The claims to name a new user by: the ID token's, completed from the userinfo endpoint when it
 * lacks the name or the email (many providers put only `sub` in the ID token).
 */
async function profileClaims(configuration: oidc.Configuration, accessToken: string, idToken: oidc.IDToken): Promise<IdentityClaims> {
  const complete = typeof idToken.preferred_username === 'string' && typeof idToken.email === 'string';
  if (complete || !configuration.serverMetadata().userinfo_endpoint) return idToken;
  try {
    const userinfo = await oidc.fetchUserInfo(configuration, accessToken, idToken.sub);
    return { ...userinfo, ...idToken };
  } catch (err) {
    throw new OidcSignInError('provider_error', 'the userinfo request failed', { cause: err });
  }
}

/**
 * Where a failed sign-in sends the browser: `/login?error=<reason>` at the public address. The log
 * gets the reason and the error's one-line summary, never a token, code or secret.
 */
export async function failedSignInLocation(deps: AccountDeps, req: Request, err: unknown): Promise<string> {
  let reason: OidcErrorCode = 'server_error';
  if (err instanceof OidcSignInError) reason = err.reason;
  else if (err instanceof AppError && err.code === 'rate_limited') reason = 'rate_limited';
  const detail = err instanceof OidcSignInError && err.cause !== undefined ? { cause: describeError(err.cause) } : {};
  if (reason === 'server_error') deps.logger.error({ requestId: req.requestId, error: describeError(err) }, 'OpenID Connect sign-in failed');
  else deps.logger.warn({ requestId: req.requestId, reason, error: describeError(err), ...detail }, 'OpenID Connect sign-in refused');
  const address = await readOptions(deps.prisma).then((options) => options.ServerAddress, () => '');
  return `${address}/login?error=${reason}`;
}

/** `GET /api/user/session`: the session cookie's user, without `New-Api-User` (docs/api.md 3.9.2). */
export async function currentSessionUser(deps: AccountDeps, req: Request, res: Response): Promise<SessionUser> {
  const caller = await sessionCaller(deps, req, res);
  if (!caller) throw new AppError('unauthorized', 'not logged in');
  const user = await storedUserOf(deps, caller);
  return { id: user.id, username: user.username, role: user.role };
}
