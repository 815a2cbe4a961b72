import { parseOrThrow } from '@modelgate/http';
import { adminUsageQuery, ROLE, usageQuery } from '@modelgate/schemas';
import { Router } from 'express';
import { z } from 'zod';
import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { sendData } from '../../lib/envelope';
import { presentParams } from '../../lib/query';
import { currentUser, requireUser } from '../auth/require-user';
import { allUsage, GRANULARITY_SECONDS, type Granularity, ownUsage, type UsageQuery } from './service';

/** The longest range per granularity, in days: at most 744 hourly or 366 daily buckets per user and model. */
const MAX_RANGE_DAYS: Record<Granularity, number> = { hour: 31, day: 366 };
/** Without `start_timestamp`: the 7 days (168 hours) ending with the bucket of `end_timestamp`. */
const DEFAULT_RANGE_SECONDS = 7 * 86_400;

/**
 * Defaults and bounds of the range (docs/api.md 3.7), widened to whole buckets: from the start of
 * the bucket holding `start_timestamp` to the end of the one holding `end_timestamp`.
 */
function rangeOf(
  params: { start_timestamp?: number; end_timestamp?: number; granularity: Granularity },
  nowSeconds: number,
  ctx: z.RefinementCtx,
): Pick<UsageQuery, 'granularity' | 'start' | 'end'> {
  const { granularity } = params;
  const size = GRANULARITY_SECONDS[granularity];
  const bucketOf = (seconds: number) => seconds - (seconds % size);
  const end = params.end_timestamp ?? nowSeconds;
  const start = params.start_timestamp ?? Math.max(0, bucketOf(end) + size - DEFAULT_RANGE_SECONDS);
  const maxDays = MAX_RANGE_DAYS[granularity];
  if (start > end) {
    ctx.addIssue({ code: 'custom', path: ['start_timestamp'], message: 'must not be after end_timestamp' });
  } else if (end - start > maxDays * 86_400) {
    ctx.addIssue({
      code: 'custom',
      path: ['end_timestamp'],
      message: `at most ${maxDays} days after start_timestamp with granularity ${granularity} (hour: ${MAX_RANGE_DAYS.hour} days, day: ${MAX_RANGE_DAYS.day})`,
    });
  }
  return { granularity, start: bucketOf(start), end: bucketOf(end) + size - 1 };
}

const ownUsageQuery = (nowSeconds: number) => usageQuery.transform((params, ctx) => rangeOf(params, nowSeconds, ctx));

const allUsageQuery = (nowSeconds: number) =>
  adminUsageQuery.transform((params, ctx): UsageQuery => ({ ...rangeOf(params, nowSeconds, ctx), username: params.username, modelName: params.model_name }));

/** docs/api.md 3.7: own usage (any user) and everyone's (admins), from the hourly usage buckets. */
export function createUsageRouter(deps: AccountDeps): Router {
  const router = Router();
  const nowSeconds = () => Math.floor(nowMs(deps) / 1000);
  router.get('/data/self', requireUser(deps), async (req, res) => {
    const query = parseOrThrow(ownUsageQuery(nowSeconds()), presentParams(req.query));
    sendData(res, await ownUsage(deps, currentUser(req).id, query));
  });
  router.get('/data', requireUser(deps, ROLE.admin), async (req, res) => {
    sendData(res, await allUsage(deps, parseOrThrow(allUsageQuery(nowSeconds()), presentParams(req.query))));
  });
  return router;
}
