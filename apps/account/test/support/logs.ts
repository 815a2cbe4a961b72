import type { Prisma } from '@modelgate/db';

/** 2026-01-01T00:00:00Z, where the log tests start their rows. */
export const LOGS_T0 = Date.UTC(2026, 0, 1) / 1000;

/** A consume row as the relay writes it (docs/api.md 3.2), for `user` at unix second `at`; `fields` override. */
export function consumeLogRow(
  user: { id: number; username: string },
  at: number,
  fields: Partial<Prisma.LogCreateManyInput> = {},
): Prisma.LogCreateManyInput {
  return {
    userId: user.id,
    username: user.username,
    type: 2,
    modelName: 'gpt-4o-mini',
    quota: -100,
    promptTokens: 10,
    completionTokens: 5,
    useTimeMs: 321,
    isStream: true,
    channelId: 7,
    tokenName: 'ci',
    requestId: `req-${user.id}-${at}`,
    createdAt: new Date(at * 1000),
    ...fields,
  };
}
