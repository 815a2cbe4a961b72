import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export interface CreatePrismaOptions {
  databaseUrl: string;
  /** Pool size per process; Prisma's pg pool defaults to 10. */
  maxConnections?: number;
}

export function createPrismaClient({ databaseUrl, maxConnections = 10 }: CreatePrismaOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: maxConnections,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  return new PrismaClient({ adapter });
}

/** Readiness probe: one round trip. */
export async function pingDatabase(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRawUnsafe('SELECT 1');
}
