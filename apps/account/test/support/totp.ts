import speakeasy from 'speakeasy';
import type { TestClock } from './app';

/** The 6-digit code an authenticator app shows at the test clock's current time. */
export function totpAt(secret: string, clock: TestClock): string {
  return speakeasy.totp({ secret, encoding: 'base32', time: clock.now() / 1000 });
}

export const TOTP_STEP_MS = 30_000;
