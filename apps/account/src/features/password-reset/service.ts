import { AppError } from '@modelgate/errors';
import { addressLimitKey, readOptions, USER_STATUS } from '@modelgate/schemas';
import type { Request } from 'express';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { hashPassword } from '../auth/passwords';
import { consumeMailLimits } from '../auth/rate-limits';
import { ensureMailQueueReachable, queueMail } from '../mail/queue-mail';
import { SYSTEM_NAME } from '../status/router';
import { findUserByEmail, setPassword } from './repository';
import { consumeResetToken, issueResetToken, RESET_TOKEN_TTL_MS } from './reset-tokens';

function resetMailText(username: string, link: string): string {
  return [
    `Hello ${username},`,
    '',
    `someone asked to reset the password of your ${SYSTEM_NAME} account. To choose a new one, open this link within ${RESET_TOKEN_TTL_MS / 60_000} minutes:`,
    '',
    link,
    '',
    'The link works once. If you did not ask for it, ignore this mail: your password stays as it is.',
  ].join('\n');
}

/**
 * docs/api.md 3.9.1 `POST /api/user/reset_password`: mails a reset link when an enabled user has the
 * address. The caller learns nothing either way: same answer, and the limits count every request.
 */
export async function requestPasswordReset(deps: AccountDeps, req: Request, email: string): Promise<void> {
  await consumeMailLimits(deps, 'pwreset', addressLimitKey(req.ip), email);
  await ensureMailQueueReachable(deps);
  const user = await findUserByEmail(deps.prisma, email);
  if (!user || user.status !== USER_STATUS.enabled) return;
  const token = await issueResetToken(deps, user.id);
  const { ServerAddress } = await readOptions(deps.prisma);
  const link = `${ServerAddress}/reset?${new URLSearchParams({ email: user.email, token })}`;
  await queueMail(deps, { to: user.email, subject: `Reset your ${SYSTEM_NAME} password`, text: resetMailText(user.username, link) });
}

export interface PasswordReset {
  email: string;
  token: string;
  password: string;
}

/**
 * docs/api.md 3.9.1 `POST /api/user/reset`: the token works once, within 15 minutes, for the user it
 * was mailed to. The new password ends every session of the user and its access token.
 */
export async function resetPassword(deps: AccountDeps, input: PasswordReset): Promise<void> {
  const user = await findUserByEmail(deps.prisma, input.email);
  const valid = user !== undefined && user.status === USER_STATUS.enabled && (await consumeResetToken(deps, user.id, input.token));
  if (!valid) throw new AppError('invalid_request', 'token: this reset link is wrong, expired or already used; ask for a new one', { param: 'token' });
  const passwordHash = await hashPassword(input.password, deps.env.PASSWORD_HASH_MEMORY_KIB);
  await setPassword(deps.prisma, user.id, passwordHash, new Date(nowMs(deps)));
  deps.logger.info({ userId: user.id }, 'password reset with a mailed link');
}
