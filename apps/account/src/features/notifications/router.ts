import { parseOrThrow } from '@modelgate/http';
import { notificationSettingsBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { currentUser, requireUser } from '../auth/require-user';
import { getNotificationSettings, updateNotificationSettings } from './service';

/** docs/api.md 3.9.6: the logged-in user's low-balance warning. */
export function createNotificationRouter(deps: AccountDeps): Router {
  const router = Router();
  const user = requireUser(deps);
  router.get('/user/setting', user, async (req, res) => {
    sendData(res, await getNotificationSettings(deps, currentUser(req).id));
  });
  router.put('/user/setting', user, async (req, res) => {
    const input = parseOrThrow(notificationSettingsBody, req.body);
    sendData(res, await updateNotificationSettings(deps, currentUser(req).id, input));
  });
  return router;
}
