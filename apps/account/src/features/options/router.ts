import { parseOrThrow } from '@modelgate/http';
import { ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { sendData } from '../../lib/envelope';
import { requireUser } from '../auth/require-user';
import { listOptions, updateOption } from './service';

const updateOptionBody = z.object({ key: z.string().min(1), value: z.unknown() }).strict();

/** Root-only runtime options (docs/api.md 3.4). */
export function createOptionRouter(deps: AccountDeps): Router {
  const router = Router();
  const root = requireUser(deps, ROLE.root);
  router.get('/option', root, async (_req, res) => {
    sendData(res, await listOptions(deps));
  });
  router.put('/option', root, async (req, res) => {
    const body = parseOrThrow(updateOptionBody, req.body);
    sendData(res, await updateOption(deps, body.key, body.value));
  });
  return router;
}
