import { AppError } from '@modelgate/errors';
import { parseOrThrow } from '@modelgate/http';
import { loginBody, registerBody, twoFactorCodeBody } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { completeTwoFactorLogin, login, logout, register } from './service';

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
    const { code } = parseOrThrow(twoFactorCodeBody, req.body);
    sendData(res, await completeTwoFactorLogin(deps, req, res, code));
  });
  router.post('/user/logout', async (req, res) => {
    await logout(deps, req, res);
    sendData(res);
  });
  // A link or an image on another site sends a GET: it must not sign anyone out.
  router.all('/user/logout', (_req, res) => {
    res.set('Allow', 'POST');
    throw new AppError('method_not_allowed', 'log out with POST');
  });
  return router;
}
