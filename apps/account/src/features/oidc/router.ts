import { oidcLoginQuery } from '@modelgate/schemas';
import { type Request, type Response, Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { currentSessionUser, failedSignInLocation, finishOidcLogin, localPath, startOidcLogin } from './service';

/**
 * Browser navigations: every answer is a 302, a failure one to `/login?error=<reason>` (never an
 * envelope or a stack the user would stare at).
 */
async function redirectTo(deps: AccountDeps, req: Request, res: Response, location: () => Promise<string>): Promise<void> {
  let target: string;
  try {
    target = await location();
  } catch (err) {
    target = await failedSignInLocation(deps, req, err);
  }
  res.set('Cache-Control', 'no-store');
  res.redirect(302, target);
}

/** docs/api.md 3.9.2: OpenID Connect sign-in, and whom a page's session cookie signs in. */
export function createOidcRouter(deps: AccountDeps): Router {
  const router = Router();
  router.get('/oauth/oidc/login', async (req, res) => {
    const { next } = oidcLoginQuery.safeParse(req.query).data ?? {};
    await redirectTo(deps, req, res, () => startOidcLogin(deps, req, res, localPath(next)));
  });
  router.get('/oauth/oidc/callback', async (req, res) => {
    await redirectTo(deps, req, res, () => finishOidcLogin(deps, req, res));
  });
  router.get('/user/session', async (req, res) => {
    sendData(res, await currentSessionUser(deps, req, res));
  });
  return router;
}
