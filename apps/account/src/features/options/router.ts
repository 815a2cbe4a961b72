import { parseOrThrow } from '@modelgate/http';
import { optionUpdateBody, ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { requireUser } from '../auth/require-user';
import { listOptions, updateOption } from './service';

/** Root-only runtime options (docs/api.md 3.4). */
export function createOptionRouter(deps: AccountDeps): Router {
  const router = Router();
  const root = requireUser(deps, ROLE.root);
  router.get('/option', root, async (_req, res) => {
    sendData(res, await listOptions(deps));
  });
  router.put('/option', root, async (req, res) => {
    const body = parseOrThrow(optionUpdateBody, req.body);
    sendData(res, await updateOption(deps, body.key, body.value));
  });
  return router;
}
