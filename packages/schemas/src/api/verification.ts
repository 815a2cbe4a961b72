import { z } from 'zod';
import { emailSchema, noData } from './common';
import type { ApiOperation } from './operation';

export const verificationBody = z.object({ email: emailSchema }).strict();

/** docs/api.md 3.9.1: the code that registration asks for while EmailVerificationEnabled is on. */
export const verificationOperations = [
  {
    method: 'post',
    path: '/api/verification',
    auth: 'public',
    summary: 'Mail a 6-digit registration code to an address no account has yet',
    body: verificationBody,
    response: noData,
  },
] as const satisfies readonly ApiOperation[];
