import { z } from 'zod';
import { emailSchema, noData, passwordSchema, usernameSchema } from './common';
import type { ApiOperation } from './operation';
import { loginViewSchema } from './users';

export const registerBody = z
  .object({
    username: usernameSchema,
    password: passwordSchema,
    email: z.union([emailSchema, z.literal('')]).optional(),
    aff_code: z.string().max(32).optional(),
    /** The mailed code (POST /api/verification); required while EmailVerificationEnabled is on. */
    verification_code: z.string().max(32).optional(),
  })
  .strict();

export const loginBody = z.object({ username: z.string().min(1).max(100), password: z.string().min(1).max(128) }).strict();

/** A TOTP or backup code: the second login step and every two-factor change. */
export const twoFactorCodeBody = z.object({ code: z.string().min(1).max(32) }).strict();

/** docs/api.md 3.1: registration, login (with the optional second step) and logout. */
export const authOperations = [
  {
    method: 'post',
    path: '/api/user/register',
    auth: 'public',
    summary: 'Register (when RegisterEnabled)',
    body: registerBody,
    response: z.object({ id: z.number().int(), username: z.string() }),
  },
  {
    method: 'post',
    path: '/api/user/login',
    auth: 'public',
    summary: 'Log in: sets the session cookie, or asks for the second factor',
    body: loginBody,
    response: z.union([loginViewSchema, z.object({ require_2fa: z.literal(true) })]),
  },
  {
    method: 'post',
    path: '/api/user/login/2fa',
    auth: 'public',
    summary: 'Second login step with a TOTP or backup code (the pending login\'s session)',
    body: twoFactorCodeBody,
    response: loginViewSchema,
  },
  { method: 'post', path: '/api/user/logout', auth: 'public', summary: 'End the session (POST only: a GET answers 405)', response: noData },
] as const satisfies readonly ApiOperation[];
