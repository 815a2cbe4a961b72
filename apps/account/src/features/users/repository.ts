import type { Prisma, PrismaClient, UserBalanceField } from '@modelgate/db';
import type { Db } from '../../lib/db';

const authFields = { id: true, username: true, role: true, status: true, group: true } as const;

export async function findActiveUserById(prisma: PrismaClient, id: number) {
  return prisma.user.findFirst({ where: { id, deletedAt: null }, select: { ...authFields, passwordChangedAt: true } });
}

export async function findUserIdByAccessTokenHash(prisma: PrismaClient, accessTokenHash: string): Promise<number | undefined> {
  const user = await prisma.user.findFirst({ where: { accessTokenHash, deletedAt: null }, select: { id: true } });
  return user?.id;
}

/** Login accepts the username or the email. */
export async function findUserForLogin(db: Db, login: string) {
  return db.user.findFirst({
    where: { deletedAt: null, OR: [{ username: login }, { email: login }] },
    select: { ...authFields, displayName: true, passwordHash: true },
  });
}

export async function findPasswordHash(db: Db, id: number): Promise<string | undefined> {
  const user = await db.user.findFirst({ where: { id, deletedAt: null }, select: { passwordHash: true } });
  return user?.passwordHash;
}

export async function isUsernameOrEmailTaken(db: Db, username: string, email: string | undefined) {
  const taken = await db.user.findFirst({
    where: { OR: [{ username }, ...(email ? [{ email }] : [])] },
    select: { username: true },
  });
  return taken ? (taken.username === username ? 'username' : 'email') : undefined;
}

export async function findInviterByAffCode(db: Db, affCode: string) {
  return db.user.findFirst({ where: { affCode, deletedAt: null }, select: { id: true, username: true } });
}

/** Balances start at 0: the ledger module books any starting amount with its log row. */
export async function insertUser(db: Db, data: Omit<Prisma.UserUncheckedCreateInput, UserBalanceField>) {
  return db.user.create({ data, select: { id: true, username: true } });
}

export const profileFields = {
  id: true,
  username: true,
  displayName: true,
  role: true,
  status: true,
  email: true,
  group: true,
  quota: true,
  usedQuota: true,
  requestCount: true,
  affCode: true,
  affCount: true,
  affQuota: true,
  affHistoryQuota: true,
  inviterId: true,
  remark: true,
  createdAt: true,
  twoFactor: { select: { enabled: true } },
} as const;

export type UserProfile = Prisma.UserGetPayload<{ select: typeof profileFields }>;

export async function findProfile(db: Db, id: number): Promise<UserProfile | null> {
  return db.user.findFirst({ where: { id, deletedAt: null }, select: profileFields });
}

/** A page of users, only those of a role below `belowRole` when given. */
export async function findProfilePage(db: Db, skip: number, take: number, belowRole?: number): Promise<{ total: number; rows: UserProfile[] }> {
  const where = { deletedAt: null, ...(belowRole === undefined ? {} : { role: { lt: belowRole } }) };
  const [total, rows] = await Promise.all([
    db.user.count({ where }),
    db.user.findMany({ where, select: profileFields, orderBy: { id: 'desc' }, skip, take }),
  ]);
  return { total, rows };
}

/** Any column but the balances, which change only through the ledger module (with their log row). */
export async function updateUser(db: Db, id: number, data: Omit<Prisma.UserUncheckedUpdateInput, UserBalanceField>): Promise<void> {
  await db.user.update({ where: { id }, data });
}

/** Sets the aff code unless one exists (two first calls racing keep one code). */
export async function setAffCodeIfMissing(db: Db, id: number, affCode: string): Promise<void> {
  await db.user.updateMany({ where: { id, affCode: null }, data: { affCode } });
}

export async function findAffCode(db: Db, id: number): Promise<string | null | undefined> {
  const user = await db.user.findFirst({ where: { id, deletedAt: null }, select: { affCode: true } });
  return user ? user.affCode : undefined;
}

/** Locks the user row for the rest of the transaction (balance changes by others wait). */
export async function lockUser(db: Db, id: number) {
  const rows = await db.$queryRaw<{ id: number; username: string; role: number; status: number; quota: bigint }[]>`
    SELECT id, username, role, status, quota FROM users WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`;
  return rows[0];
}

export async function hasRootUser(db: Db, rootRole: number): Promise<boolean> {
  return (await db.user.count({ where: { role: rootRole, deletedAt: null } })) > 0;
}
