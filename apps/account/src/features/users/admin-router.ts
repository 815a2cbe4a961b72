import { pageOf, parseOrThrow } from '@modelgate/http';
import { adminUserCreateBody, adminUserUpdateBody, manageUserBody, ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { currentUser, requireUser } from '../auth/require-user';
import { createUserAsAdmin, getUser, listUsers, manageUser, updateUserAsAdmin } from './admin-service';

/** docs/api.md 3.3 and 3.8 users administration (role >= 10). Mounted after the self routes: `/user/:id` is a catch-all. */
export function createUserAdminRouter(deps: AccountDeps): Router {
  const router = Router();
  const admin = requireUser(deps, ROLE.admin);
  router.get('/user', admin, async (req, res) => {
    sendData(res, await listUsers(deps, currentUser(req), pageOf(req.query)));
  });
  router.post('/user', admin, async (req, res) => {
    sendData(res, await createUserAsAdmin(deps, currentUser(req), parseOrThrow(adminUserCreateBody, req.body), req.requestId));
  });
  router.put('/user', admin, async (req, res) => {
    sendData(res, await updateUserAsAdmin(deps, currentUser(req), parseOrThrow(adminUserUpdateBody, req.body), req.requestId));
  });
  router.post('/user/manage', admin, async (req, res) => {
    const body = parseOrThrow(manageUserBody, req.body);
    sendData(res, await manageUser(deps, currentUser(req), body.id, body.action));
  });
  router.get('/user/:id', admin, async (req, res) => {
    sendData(res, await getUser(deps, currentUser(req), idParam(req.params.id, 'user')));
  });
  return router;
}
