import { parseOrThrow } from '@modelgate/http';
import { verificationBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { sendVerificationCode } from './service';

/** docs/api.md 3.9.1: the registration code (public). */
export function createVerificationRouter(deps: AccountDeps): Router {
  const router = Router();
  router.post('/verification', async (req, res) => {
    const { email } = parseOrThrow(verificationBody, req.body);
    await sendVerificationCode(deps, req, email);
    sendData(res);
  });
  return router;
}
