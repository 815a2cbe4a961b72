import { z } from 'zod';
import { emailSchema, noData, passwordSchema } from './common';
import type { ApiOperation } from './operation';

/** A reset token as mailed: 43 base64url characters; anything else simply never matches. */
const resetTokenSchema = z.string().min(1).max(128);

export const passwordResetRequestBody = z.object({ email: emailSchema }).strict();

export const passwordResetBody = z.object({ email: emailSchema, token: resetTokenSchema, password: passwordSchema }).strict();

/** docs/api.md 3.9.1: a forgotten password, reset through a mailed link. */
export const passwordResetOperations = [
  {
    method: 'post',
    path: '/api/user/reset_password',
    auth: 'public',
    summary: 'Mail a password reset link (the same answer whether or not an account has the address)',
    body: passwordResetRequestBody,
    response: noData,
  },
  {
    method: 'post',
    path: '/api/user/reset',
    auth: 'public',
    summary: 'Set a new password with a mailed reset token; every session of the user ends',
    body: passwordResetBody,
    response: noData,
  },
] as const satisfies readonly ApiOperation[];
