import { parseOrThrow } from '@modelgate/http';
import { affTransferBody, selfUpdateBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { currentUser, requireUser } from '../auth/require-user';
import { reissueSession } from '../auth/service';
import { getAffCode, getSelf, issueAccessToken, transferAffQuota, updateSelf } from './service';

/** docs/api.md 3.2: the logged-in user's own account. */
export function createSelfRouter(deps: AccountDeps): Router {
  const router = Router();
  const user = requireUser(deps);
  router.get('/user/self', user, async (req, res) => {
    sendData(res, await getSelf(deps, currentUser(req).id));
  });
  router.put('/user/self', user, async (req, res) => {
    const input = parseOrThrow(selfUpdateBody, req.body);
    const self = await updateSelf(deps, currentUser(req).id, input);
    // A password change voids every earlier session; the caller's own carries on under a new id.
    if (input.password !== undefined) await reissueSession(deps, req, res, currentUser(req).id);
    sendData(res, self);
  });
  router.get('/user/token', user, async (req, res) => {
    sendData(res, await issueAccessToken(deps, currentUser(req).id));
  });
  router.get('/user/aff', user, async (req, res) => {
    sendData(res, await getAffCode(deps, currentUser(req).id));
  });
  router.post('/user/aff_transfer', user, async (req, res) => {
    const { quota } = parseOrThrow(affTransferBody, req.body);
    sendData(res, await transferAffQuota(deps, currentUser(req).id, quota, req.requestId));
  });
  return router;
}
