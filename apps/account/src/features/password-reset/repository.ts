import type { Db } from '../../lib/db';

/**
 * The user an email address names: the one whose address is exactly this, else the only one whose
 * address differs at most in case (people type addresses in any case); undefined otherwise.
 */
export async function findUserByEmail(db: Db, email: string) {
  const users = await db.user.findMany({
    where: { deletedAt: null, email: { equals: email, mode: 'insensitive' } },
    select: { id: true, username: true, email: true, status: true },
    take: 2,
  });
  const found = users.find((user) => user.email === email) ?? (users.length === 1 ? users[0] : undefined);
  return found?.email ? { ...found, email: found.email } : undefined;
}

/** The new password; sessions issued before `changedAt` end, and so does the access token. */
export async function setPassword(db: Db, id: number, passwordHash: string, changedAt: Date): Promise<void> {
  await db.user.update({ where: { id }, data: { passwordHash, passwordChangedAt: changedAt, accessTokenHash: null } });
}
