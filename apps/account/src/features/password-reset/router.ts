import { parseOrThrow } from '@modelgate/http';
import { passwordResetBody, passwordResetRequestBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { requestPasswordReset, resetPassword } from './service';

/** docs/api.md 3.9.1: a forgotten password, reset through a mailed link (public). */
export function createPasswordResetRouter(deps: AccountDeps): Router {
  const router = Router();
  router.post('/user/reset_password', async (req, res) => {
    const { email } = parseOrThrow(passwordResetRequestBody, req.body);
    await requestPasswordReset(deps, req, email);
    sendData(res);
  });
  router.post('/user/reset', async (req, res) => {
    await resetPassword(deps, parseOrThrow(passwordResetBody, req.body));
    sendData(res);
  });
  return router;
}
