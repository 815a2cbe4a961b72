import { z } from 'zod';
import type { ApiOperation } from './operation';

/**
 * Why an OpenID Connect sign-in ended at `/login?error=<code>` (docs/api.md 3.9.2). The console
 * turns each into a sentence; the account service's log says more.
 */
export const OIDC_ERROR_CODES = [
  /** OIDCEnabled is off, or the issuer or client id is not set. */
  'sso_disabled',
  /** The provider's discovery document could not be read (unreachable, wrong issuer, not https). */
  'sso_unavailable',
  /** The user declined or cancelled at the provider. */
  'access_denied',
  /** The provider answered with another error. */
  'provider_error',
  /** Unknown, expired or already used state, or one started in another browser. */
  'invalid_state',
  /** The code exchange failed or the ID token did not validate. */
  'invalid_token',
  'user_disabled',
  /** Too many sign-ins started from one address (the password login's limit). */
  'rate_limited',
  'server_error',
] as const;
export type OidcErrorCode = (typeof OIDC_ERROR_CODES)[number];

export const oidcLoginQuery = z.object({
  next: z.string().optional().describe('where to land after signing in: a local path such as /keys (anything else means /)'),
});

export const oidcCallbackQuery = z.object({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional().describe('set by the provider instead of code when the sign-in failed'),
  error_description: z.string().optional(),
});

/** `GET /api/user/session`: whom the session cookie signs in. */
export const sessionUserSchema = z.object({ id: z.number().int(), username: z.string(), role: z.number().int() });
export type SessionUser = z.output<typeof sessionUserSchema>;

/** docs/api.md 3.9.2: OpenID Connect sign-in and the session check a page makes after it. */
export const oidcOperations = [
  {
    method: 'get',
    path: '/api/oauth/oidc/login',
    auth: 'public',
    summary: 'Start an OpenID Connect sign-in: redirects the browser to the provider',
    query: oidcLoginQuery,
    response: z.never(),
    redirect: 'The provider\'s authorization endpoint; `/login?error=sso_disabled|sso_unavailable|rate_limited|server_error` when SSO cannot start',
  },
  {
    method: 'get',
    path: '/api/oauth/oidc/callback',
    auth: 'public',
    summary: 'Where the provider sends the browser back: signs the user in and redirects',
    query: oidcCallbackQuery,
    response: z.never(),
    redirect: '`next` (or `/`) with the session cookie set; `/sign-in?step=2fa` when the user has two-factor on; `/login?error=<code>` otherwise',
  },
  {
    method: 'get',
    path: '/api/user/session',
    auth: 'session',
    summary: 'Whom the session cookie signs in (no New-Api-User needed); 401 without a session',
    response: sessionUserSchema,
  },
] as const satisfies readonly ApiOperation[];
