import { pageOf, parseOrThrow } from '@modelgate/http';
import { ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { idParam } from '../../lib/params';
import { currentUser, requireUser } from '../auth/require-user';
import { createUserAsAdmin, getUser, listUsers, MANAGE_ACTIONS, manageUser, updateUserAsAdmin } from './admin-service';
import { groupSchema, passwordSchema, usernameSchema } from './fields';

const userId = z.number().int().positive().max(2_147_483_647);

const displayNameSchema = z.string().max(20);
const quotaSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const adminUpdateBody = z
  .object({
    id: userId,
    display_name: displayNameSchema.optional(),
    group: groupSchema.optional(),
    quota: quotaSchema.optional(),
    remark: z.string().max(255).optional(),
  })
  .strict();

/** docs/api.md 3.8: the username and password rules of registration (3.1); never a root. */
const adminCreateBody = z
  .object({
    username: usernameSchema,
    password: passwordSchema,
    display_name: displayNameSchema.optional(),
    group: groupSchema.optional(),
    quota: quotaSchema.optional(),
    role: z.union([z.literal(ROLE.user), z.literal(ROLE.admin)], { error: `must be ${ROLE.user} (common user) or ${ROLE.admin} (admin)` }).optional(),
  })
  .strict();

const manageBody = z.object({ id: userId, action: z.enum(MANAGE_ACTIONS) }).strict();

/** docs/api.md 3.3 and 3.8 users administration (role >= 10). Mounted after the self routes: `/user/:id` is a catch-all. */
export function createUserAdminRouter(deps: AccountDeps): Router {
  const router = Router();
  const admin = requireUser(deps, ROLE.admin);
  router.get('/user', admin, async (req, res) => {
    sendData(res, await listUsers(deps, pageOf(req.query)));
  });
  router.post('/user', admin, async (req, res) => {
    sendData(res, await createUserAsAdmin(deps, currentUser(req), parseOrThrow(adminCreateBody, req.body), req.requestId));
  });
  router.put('/user', admin, async (req, res) => {
    sendData(res, await updateUserAsAdmin(deps, currentUser(req), parseOrThrow(adminUpdateBody, req.body), req.requestId));
  });
  router.post('/user/manage', admin, async (req, res) => {
    const body = parseOrThrow(manageBody, req.body);
    sendData(res, await manageUser(deps, currentUser(req), body.id, body.action));
  });
  router.get('/user/:id', admin, async (req, res) => {
    sendData(res, await getUser(deps, currentUser(req), idParam(req.params.id, 'user')));
  });
  return router;
}
