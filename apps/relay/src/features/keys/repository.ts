import type { PrismaClient } from '@modelgate/db';

export interface TokenRow {
  id: number;
  userId: number;
  name: string;
  keyHash: string;
  status: number;
  expiresAt: Date | null;
  remainQuota: bigint;
  unlimitedQuota: boolean;
  modelLimitsEnabled: boolean;
  modelLimits: string;
  allowIps: string;
  group: string;
}

export interface UserRow {
  id: number;
  username: string;
  status: number;
  role: number;
  group: string;
  deletedAt: Date | null;
}

const TOKEN_FIELDS = {
  id: true,
  userId: true,
  name: true,
  keyHash: true,
  status: true,
  expiresAt: true,
  remainQuota: true,
  unlimitedQuota: true,
  modelLimitsEnabled: true,
  modelLimits: true,
  allowIps: true,
  group: true,
} as const;

const USER_FIELDS = { id: true, username: true, status: true, role: true, group: true, deletedAt: true } as const;

export class KeyRepository {
  constructor(private readonly prisma: PrismaClient) {}

  findTokenByHash(keyHash: string): Promise<(TokenRow & { user: UserRow }) | null> {
    return this.prisma.token.findUnique({
      where: { keyHash },
      select: { ...TOKEN_FIELDS, user: { select: USER_FIELDS } },
    });
  }

  findTokens(ids: number[]): Promise<TokenRow[]> {
    return this.prisma.token.findMany({ where: { id: { in: ids } }, select: TOKEN_FIELDS });
  }

  findUsers(ids: number[]): Promise<UserRow[]> {
    return this.prisma.user.findMany({ where: { id: { in: ids } }, select: USER_FIELDS });
  }
}
