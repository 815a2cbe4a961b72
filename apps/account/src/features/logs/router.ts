import { pageOf, parseOrThrow } from '@modelgate/http';
import { ALL_LOG_TYPES, logQuery, ROLE } from '@modelgate/schemas';
import { Router } from 'express';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { sendCsv } from '../../lib/csv';
import { sendData } from '../../lib/envelope';
import { presentParams } from '../../lib/query';
import { currentUser, requireUser } from '../auth/require-user';
import type { LogFilter } from './repository';
import { listAllLogs, listOwnLogs, logCsvChunks } from './service';

/** Query text -> filter. */
function filterOf(query: Record<string, unknown>): LogFilter {
  const parsed = parseOrThrow(logQuery, presentParams(query));
  return {
    type: parsed.type === ALL_LOG_TYPES ? undefined : parsed.type,
    modelName: parsed.model_name,
    tokenName: parsed.token_name,
    username: parsed.username,
    from: parsed.start_timestamp === undefined ? undefined : new Date(parsed.start_timestamp * 1000),
    to: parsed.end_timestamp === undefined ? undefined : new Date(parsed.end_timestamp * 1000 + 999),
  };
}

/** `modelgate-logs-<own|all>-<UTC time, e.g. 20260101T120000Z>.csv` */
function exportFilename(deps: AccountDeps, scope: 'own' | 'all'): string {
  const stamp = new Date(nowMs(deps)).toISOString().replace(/\.\d{3}/, '').replace(/[-:]/g, '');
  return `modelgate-logs-${scope}-${stamp}.csv`;
}

/** docs/api.md 3.2 (own logs), 3.3 (every user's logs, admins) and their CSV exports (3.8). */
export function createLogRouter(deps: AccountDeps): Router {
  const router = Router();
  router.get('/log/self', requireUser(deps), async (req, res) => {
    sendData(res, await listOwnLogs(deps, currentUser(req).id, filterOf(req.query), pageOf(req.query)));
  });
  router.get('/log/self/export', requireUser(deps), async (req, res) => {
    const chunks = logCsvChunks(deps, { scope: { userId: currentUser(req).id }, filter: filterOf(req.query) });
    await sendCsv(deps, req, res, exportFilename(deps, 'own'), chunks);
  });
  router.get('/log/export', requireUser(deps, ROLE.admin), async (req, res) => {
    await sendCsv(deps, req, res, exportFilename(deps, 'all'), logCsvChunks(deps, { scope: 'all', filter: filterOf(req.query) }));
  });
  router.get('/log', requireUser(deps, ROLE.admin), async (req, res) => {
    sendData(res, await listAllLogs(deps, filterOf(req.query), pageOf(req.query)));
  });
  return router;
}
