import type { OidcErrorCode } from '@modelgate/schemas/api';

const MESSAGES: Record<OidcErrorCode, string> = {
  sso_disabled: 'Single sign-on is not enabled on this gateway. Sign in with your username and password.',
  sso_unavailable: 'The identity provider could not be reached. Try again later, or ask an administrator to check the single sign-on settings.',
  access_denied: 'Single sign-on was cancelled at the identity provider.',
  provider_error: 'The identity provider reported an error. Try again.',
  invalid_state: 'That sign-in expired or was started in another browser. Start it again here.',
  invalid_token: 'The identity provider\'s answer could not be verified. Try again, or ask an administrator.',
  user_disabled: 'This account is disabled. Ask an administrator.',
  rate_limited: 'Too many sign-in attempts from your address. Wait a few minutes and try again.',
  server_error: 'Something went wrong while signing you in. Try again.',
};

/** What `/login?error=<code>` tells the user after a failed single sign-on (docs/api.md 3.9.2). */
export function ssoErrorMessage(code: string | null): string | undefined {
  if (code === null) return undefined;
  return Object.hasOwn(MESSAGES, code) ? MESSAGES[code as OidcErrorCode] : 'Single sign-on failed. Try again.';
}
