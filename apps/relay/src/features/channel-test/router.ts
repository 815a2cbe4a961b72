import { timingSafeEqual } from 'node:crypto';
import { AppError } from '@modelgate/errors';
import { CHANNEL_TEST_PATH, channelTestRequestSchema } from '@modelgate/schemas';
import express, { Router } from 'express';
import type { ChannelTester } from './service';

function sameToken(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The relay's internal API: the channel test the account service asks for (docs/api.md 3.3). Not
 * reachable through the edge, which forwards only /v1 and /v1beta here; the bearer token is
 * derived from CRYPTO_SECRET (internalApiToken).
 */
export function channelTestRouter(tester: ChannelTester, token: string): Router {
  const router = Router();
  const expected = `Bearer ${token}`;
  router.post(CHANNEL_TEST_PATH, (req, _res, next) => {
    next(sameToken(req.headers.authorization, expected) ? undefined : new AppError('unauthorized', 'the internal API needs its token'));
  }, express.json({ limit: '4kb' }), async (req, res) => {
    const parsed = channelTestRequestSchema.safeParse(req.body);
    if (!parsed.success) throw new AppError('invalid_request', `body: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    res.json(await tester.test(parsed.data.channel_id, parsed.data.model));
  });
  return router;
}
