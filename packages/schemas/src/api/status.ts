import { z } from 'zod';
import type { ApiOperation } from './operation';

/** docs/api.md 3.1 `GET /api/status`: public settings a client needs before logging in. */
export const statusViewSchema = z.object({
  version: z.string(),
  system_name: z.string(),
  quota_per_unit: z.number(),
  register_enabled: z.boolean(),
  stripe_enabled: z.boolean(),
  min_topup: z.number(),
  /** docs/api.md 3.9.1: registration asks for an email and its mailed code (EmailVerificationEnabled). */
  email_verification: z.boolean(),
  /** docs/api.md 3.9.1: SMTPServer is set, so password reset links can be mailed. */
  smtp_enabled: z.boolean(),
  /** docs/api.md 3.9.2: OIDCEnabled, with an issuer and a client id set. */
  oidc_enabled: z.boolean(),
});
export type StatusView = z.output<typeof statusViewSchema>;

export const statusOperations = [
  { method: 'get', path: '/api/status', auth: 'public', summary: 'Public settings a client needs before logging in', response: statusViewSchema },
] as const satisfies readonly ApiOperation[];
