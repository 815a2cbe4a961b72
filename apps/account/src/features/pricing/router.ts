import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { currentUser, requireUser } from '../auth/require-user';
import { getPricing } from './service';

/** docs/api.md 3.8: the price list for the caller's group (any logged-in user). */
export function createPricingRouter(deps: AccountDeps): Router {
  const router = Router();
  router.get('/pricing', requireUser(deps), async (req, res) => {
    sendData(res, await getPricing(deps, currentUser(req).group));
  });
  return router;
}
