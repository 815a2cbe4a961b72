import { AppError } from '@modelgate/errors';
import { addressLimitKey, readOptions } from '@modelgate/schemas';
import type { Request } from 'express';
import type { AccountDeps } from '../../deps';
import { consumeMailLimits } from '../auth/rate-limits';
import { queueMail } from '../mail/queue-mail';
import { SYSTEM_NAME } from '../status/router';
import { CODE_TTL_MS, consumeCode, issueCode } from './codes';
import { isEmailTaken } from './repository';

function codeMailText(code: string, serverAddress: string): string {
  return [
    `Your ${SYSTEM_NAME} verification code is ${code}.`,
    '',
    `Enter it on the registration page (${serverAddress}/register) within ${CODE_TTL_MS / 60_000} minutes.`,
    'If you did not ask for it, ignore this mail.',
  ].join('\n');
}

/** docs/api.md 3.9.1 `POST /api/verification`: mails a 6-digit code to an address no account has yet. */
export async function sendVerificationCode(deps: AccountDeps, req: Request, email: string): Promise<void> {
  await consumeMailLimits(deps, 'verify', addressLimitKey(req.ip), email);
  // Registration would refuse the address anyway (409): no code for it.
  if (await isEmailTaken(deps.prisma, email)) throw new AppError('conflict', 'email already taken', { param: 'email' });
  const code = await issueCode(deps, email);
  const { ServerAddress } = await readOptions(deps.prisma);
  await queueMail(deps, { to: email, subject: `Your ${SYSTEM_NAME} verification code`, text: codeMailText(code, ServerAddress) });
}

/**
 * Registration while EmailVerificationEnabled is on: the email and its mailed code are required,
 * and the code works once. 400 naming the field otherwise.
 */
export async function checkRegistrationEmail(deps: AccountDeps, email: string | undefined, code: string | undefined): Promise<void> {
  if (!email) throw new AppError('invalid_request', 'email: required, with the code mailed to it', { param: 'email' });
  if (!code) throw new AppError('invalid_request', 'verification_code: required (POST /api/verification mails it)', { param: 'verification_code' });
  if (!(await consumeCode(deps, email, code))) {
    throw new AppError('invalid_request', 'verification_code: wrong or expired code; ask for a new one', { param: 'verification_code' });
  }
}
