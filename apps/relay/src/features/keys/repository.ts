import type { Prisma, PrismaClient } from '@modelgate/db';

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
  rpmLimit: number;
  tpmLimit: number;
  maxConcurrency: number;
  budgetUsd: Prisma.Decimal | null;
  budgetPeriod: string;
}

/** What the ledger counted towards a key's budget, and the period it counted it in (docs/api.md 3.9.4). */
export interface BudgetUseRow {
  budgetUsedQuota: bigint;
  budgetPeriodStart: Date | null;
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
  rpmLimit: true,
  tpmLimit: true,
  maxConcurrency: true,
  budgetUsd: true,
  budgetPeriod: true,
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

  findBudgetUse(id: number): Promise<BudgetUseRow | null> {
    return this.prisma.token.findUnique({ where: { id }, select: { budgetUsedQuota: true, budgetPeriodStart: true } });
  }

  findUsers(ids: number[]): Promise<UserRow[]> {
    return this.prisma.user.findMany({ where: { id: { in: ids } }, select: USER_FIELDS });
  }
}
