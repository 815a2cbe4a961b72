import type { Db } from '../../lib/db';

/** The user an identity signs in, deleted users included (their sign-in is refused, not replaced). */
export async function findIdentityUser(db: Db, issuer: string, subject: string) {
  const identity = await db.userIdentity.findUnique({
    where: { issuer_subject: { issuer, subject } },
    select: { user: { select: { id: true, status: true, deletedAt: true } } },
  });
  return identity?.user;
}

export async function insertIdentity(db: Db, userId: number, issuer: string, subject: string): Promise<void> {
  await db.userIdentity.create({ data: { userId, issuer, subject } });
}

/** Usernames are unique across deleted users too. */
export async function isUsernameTaken(db: Db, username: string): Promise<boolean> {
  return (await db.user.count({ where: { username } })) > 0;
}

/** Whether any user has this email, whatever its case. */
export async function isEmailTaken(db: Db, email: string): Promise<boolean> {
  return (await db.user.count({ where: { email: { equals: email, mode: 'insensitive' } } })) > 0;
}
