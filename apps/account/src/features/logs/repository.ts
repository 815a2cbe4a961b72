import type { Prisma } from '@modelgate/db';
import type { Db } from '../../lib/db';

export interface LogFilter {
  userId?: number;
  username?: string;
  type?: number;
  modelName?: string;
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

export async function findLogPage(db: Db, filter: LogFilter, skip: number, take: number): Promise<{ total: number; rows: LogRow[] }> {
  const where: Prisma.LogWhereInput = {
    userId: filter.userId,
    username: filter.username,
    type: filter.type,
    modelName: filter.modelName,
    createdAt: filter.from || filter.to ? { gte: filter.from, lte: filter.to } : undefined,
  };
  const [total, rows] = await Promise.all([
    db.log.count({ where }),
    db.log.findMany({ where, select: logFields, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}
