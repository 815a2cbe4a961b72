import { z } from 'zod';
import { emptyBody, noData } from './common';
import type { ApiOperation } from './operation';
import { twoFactorCodeBody } from './auth';

/** docs/api.md 3.2, two-factor management for the logged-in user. */
export const twoFactorOperations = [
  {
    method: 'get',
    path: '/api/user/2fa/status',
    auth: 'user',
    summary: 'Two-factor state',
    response: z.object({ enabled: z.boolean(), locked: z.boolean(), backup_codes_remaining: z.number().int() }),
  },
  {
    method: 'post',
    path: '/api/user/2fa/setup',
    auth: 'user',
    summary: 'Start two-factor setup: a new secret and backup codes',
    body: emptyBody,
    response: z.object({ secret: z.string(), qr_code_data: z.string(), backup_codes: z.array(z.string()) }),
  },
  { method: 'post', path: '/api/user/2fa/enable', auth: 'user', summary: 'Enable two-factor with a TOTP', body: twoFactorCodeBody, response: noData },
  { method: 'post', path: '/api/user/2fa/disable', auth: 'user', summary: 'Disable two-factor', body: twoFactorCodeBody, response: noData },
  {
    method: 'post',
    path: '/api/user/2fa/backup_codes',
    auth: 'user',
    summary: 'Replace the backup codes',
    body: twoFactorCodeBody,
    response: z.object({ backup_codes: z.array(z.string()) }),
  },
] as const satisfies readonly ApiOperation[];
