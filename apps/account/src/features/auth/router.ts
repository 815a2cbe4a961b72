import { parseOrThrow } from '@modelgate/http';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { codeBody } from '../two-factor/router';
import { emailSchema, passwordSchema, usernameSchema } from '../users/fields';
import { completeTwoFactorLogin, login, logout, register } from './service';


const registerBody = z
  .object({
    username: usernameSchema,
    password: passwordSchema,
    email: z.union([emailSchema, z.literal('')]).optional(),
    aff_code: z.string().max(32).optional(),
  })
  .strict();

const loginBody = z.object({ username: z.string().min(1).max(100), password: z.string().min(1).max(128) }).strict();

/** docs/api.md 3.1: registration, login (with the optional second step) and logout. */
export function createAuthRouter(deps: AccountDeps): Router {
  const router = Router();
  router.post('/user/register', async (req, res) => {
    const body = parseOrThrow(registerBody, req.body);
    sendData(res, await register(deps, req, { ...body, email: body.email || undefined, aff_code: body.aff_code || undefined }));
  });
  router.post('/user/login', async (req, res) => {
    sendData(res, await login(deps, req, res, parseOrThrow(loginBody, req.body)));
  });
  router.post('/user/login/2fa', async (req, res) => {
    const { code } = parseOrThrow(codeBody, req.body);
    sendData(res, await completeTwoFactorLogin(deps, req, res, code));
  });
  router.get('/user/logout', async (req, res) => {
    await logout(deps, req, res);
    sendData(res);
  });
  return router;
}
