import { parseOrThrow } from '@modelgate/http';
import { emptyBody, twoFactorCodeBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { currentUser, requireUser } from '../auth/require-user';
import { disableTwoFactor, enableTwoFactor, renewBackupCodes, setupTwoFactor, twoFactorStatus } from './service';

/** docs/api.md 3.2, two-factor management for the logged-in user. */
export function createTwoFactorRouter(deps: AccountDeps): Router {
  const router = Router();
  const user = requireUser(deps);
  router.get('/user/2fa/status', user, async (req, res) => {
    sendData(res, await twoFactorStatus(deps, currentUser(req).id));
  });
  router.post('/user/2fa/setup', user, async (req, res) => {
    parseOrThrow(emptyBody, req.body ?? {});
    sendData(res, await setupTwoFactor(deps, currentUser(req)));
  });
  router.post('/user/2fa/enable', user, async (req, res) => {
    const { code } = parseOrThrow(twoFactorCodeBody, req.body);
    await enableTwoFactor(deps, currentUser(req).id, code);
    sendData(res);
  });
  router.post('/user/2fa/disable', user, async (req, res) => {
    const { code } = parseOrThrow(twoFactorCodeBody, req.body);
    await disableTwoFactor(deps, currentUser(req).id, code);
    sendData(res);
  });
  router.post('/user/2fa/backup_codes', user, async (req, res) => {
    const { code } = parseOrThrow(twoFactorCodeBody, req.body);
    sendData(res, await renewBackupCodes(deps, currentUser(req).id, code));
  });
  return router;
}
