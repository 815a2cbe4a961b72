export * from './client';
export { Prisma, PrismaClient } from './generated/prisma/client';
export type * from './generated/prisma/models';
