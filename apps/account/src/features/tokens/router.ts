import { pageOf, parseOrThrow } from '@modelgate/http';
import { tokenCreateBody, tokenListQuery, tokenUpdateBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { presentParams } from '../../lib/query';
import { currentUser, requireUser } from '../auth/require-user';
import { createToken, deleteToken, getToken, listTokens, updateToken } from './service';

/**
 * docs/api.md 3.2 API keys, scoped to their owner (another user's id is a 404), except that an admin
 * reads and edits the keys of users of a lower role (3.9.3).
 */
export function createTokenRouter(deps: AccountDeps): Router {
  const router = Router();
  const user = requireUser(deps);
  router.post('/token', user, async (req, res) => {
    sendData(res, await createToken(deps, currentUser(req), parseOrThrow(tokenCreateBody, req.body)));
  });
  router.get('/token', user, async (req, res) => {
    const { user_id: userId } = parseOrThrow(tokenListQuery, presentParams(req.query));
    sendData(res, await listTokens(deps, currentUser(req), userId === undefined ? undefined : Number(userId), pageOf(req.query)));
  });
  router.get('/token/:id', user, async (req, res) => {
    sendData(res, await getToken(deps, currentUser(req), idParam(req.params.id, 'token')));
  });
  router.put('/token', user, async (req, res) => {
    const { id, ...fields } = parseOrThrow(tokenUpdateBody, req.body);
    sendData(res, await updateToken(deps, currentUser(req), id, fields));
  });
  router.delete('/token/:id', user, async (req, res) => {
    await deleteToken(deps, currentUser(req).id, idParam(req.params.id, 'token'));
    sendData(res);
  });
  return router;
}
