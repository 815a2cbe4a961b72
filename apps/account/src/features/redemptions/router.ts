import { pageOf, parseOrThrow } from '@modelgate/http';
import { redemptionCreateBody, redemptionListQuery, redemptionUpdateBody, ROLE, topUpRedeemBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { presentParams } from '../../lib/query';
import { currentUser, requireUser } from '../auth/require-user';
import { createRedemptions, getRedemption, listRedemptions, redeemCode, removeRedemption, updateRedemption } from './service';

/** docs/api.md 3.9.5: admins make and manage redemption codes; any user redeems one. */
export function createRedemptionRouter(deps: AccountDeps): Router {
  const router = Router();
  const admin = requireUser(deps, ROLE.admin);
  router.post('/redemption', admin, async (req, res) => {
    sendData(res, await createRedemptions(deps, currentUser(req), parseOrThrow(redemptionCreateBody, req.body)));
  });
  router.get('/redemption', admin, async (req, res) => {
    const { keyword } = parseOrThrow(redemptionListQuery, presentParams(req.query));
    sendData(res, await listRedemptions(deps, keyword, pageOf(req.query)));
  });
  router.get('/redemption/:id', admin, async (req, res) => {
    sendData(res, await getRedemption(deps, idParam(req.params.id, 'redemption code')));
  });
  router.put('/redemption', admin, async (req, res) => {
    sendData(res, await updateRedemption(deps, parseOrThrow(redemptionUpdateBody, req.body)));
  });
  router.delete('/redemption/:id', admin, async (req, res) => {
    await removeRedemption(deps, idParam(req.params.id, 'redemption code'));
    sendData(res);
  });
  router.post('/user/topup', requireUser(deps), async (req, res) => {
    const { key } = parseOrThrow(topUpRedeemBody, req.body);
    sendData(res, await redeemCode(deps, req, currentUser(req), key));
  });
  return router;
}
