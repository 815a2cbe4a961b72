import type { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export interface LogFilter {
  userId?: number;
  username?: string;
  type?: number;
  modelName?: string;
  tokenName?: string;
  from?: Date;
  to?: Date;
}

const logFields = {
  id: true,
  userId: true,
  username: true,
  createdAt: true,
  type: true,
  content: true,
  modelName: true,
  tokenName: true,
  quota: true,
  promptTokens: true,
  completionTokens: true,
  useTimeMs: true,
  isStream: true,
  requestId: true,
  channelId: true,
  other: true,
} as const;

export type LogRow = Prisma.LogGetPayload<{ select: typeof logFields }>;

function whereOf(filter: LogFilter): Prisma.LogWhereInput {
  return {
    userId: filter.userId,
    username: filter.username,
    type: filter.type,
    modelName: filter.modelName,
    tokenName: filter.tokenName,
    createdAt: filter.from || filter.to ? { gte: filter.from, lte: filter.to } : undefined,
  };
}

export async function findLogPage(db: Db, filter: LogFilter, skip: number, take: number): Promise<{ total: number; rows: LogRow[] }> {
  const where = whereOf(filter);
  const [total, rows] = await Promise.all([
    db.log.count({ where }),
    db.log.findMany({ where, select: logFields, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/** Keyset page for exports: up to `take` matching rows with an id below `beforeId` (all when undefined), newest first. */
export async function findLogsBefore(db: Db, filter: LogFilter, beforeId: bigint | undefined, take: number): Promise<LogRow[]> {
  const where = whereOf(filter);
  return db.log.findMany({ where: beforeId === undefined ? where : { ...where, id: { lt: beforeId } }, select: logFields, orderBy: { id: 'desc' }, take });
}
