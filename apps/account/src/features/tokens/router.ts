import { pageOf, parseOrThrow } from '@modelgate/http';
import { TOKEN_STATUS } from '@modelgate/schemas';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { currentUser, requireUser } from '../auth/require-user';
import { commaList, groupSchema, modelNameSchema } from '../users/fields';
import { createToken, deleteToken, getToken, listTokens, updateToken } from './service';

const tokenFields = {
  remain_quota: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  unlimited_quota: z.boolean().optional(),
  expired_time: z.number().int().min(-1).max(253_402_300_799).optional(),
  model_limits_enabled: z.boolean().optional(),
  /** '' for none. */
  model_limits: commaList(modelNameSchema, 'model', false).optional(),
  allow_ips: z.string().max(10_000).optional(),
  group: z.union([groupSchema, z.literal('')]).optional(),
};
const tokenName = z.string().trim().min(1).max(50);

const createBody = z.object({ name: tokenName, ...tokenFields }).strict();
const updateBody = z
  .object({
    id: z.number().int().positive().max(2_147_483_647),
    name: tokenName.optional(),
    status: z.union([z.literal(TOKEN_STATUS.enabled), z.literal(TOKEN_STATUS.disabled)]).optional(),
    ...tokenFields,
  })
  .strict();

/** docs/api.md 3.2 API keys, always scoped to their owner (another user's id is a 404). */
export function createTokenRouter(deps: AccountDeps): Router {
  const router = Router();
  const user = requireUser(deps);
  router.post('/token', user, async (req, res) => {
    sendData(res, await createToken(deps, currentUser(req), parseOrThrow(createBody, req.body)));
  });
  router.get('/token', user, async (req, res) => {
    sendData(res, await listTokens(deps, currentUser(req).id, pageOf(req.query)));
  });
  router.get('/token/:id', user, async (req, res) => {
    sendData(res, await getToken(deps, currentUser(req).id, idParam(req.params.id, 'token')));
  });
  router.put('/token', user, async (req, res) => {
    const { id, ...fields } = parseOrThrow(updateBody, req.body);
    sendData(res, await updateToken(deps, currentUser(req), id, fields));
  });
  router.delete('/token/:id', user, async (req, res) => {
    await deleteToken(deps, currentUser(req).id, idParam(req.params.id, 'token'));
    sendData(res);
  });
  return router;
}
