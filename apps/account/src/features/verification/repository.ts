import type { Db } from '../../lib/db';

/** Whether any user, deleted ones included (the address stays theirs), has the address in any case. */
export async function isEmailTaken(db: Db, email: string): Promise<boolean> {
  const user = await db.user.findFirst({ where: { email: { equals: email, mode: 'insensitive' } }, select: { id: true } });
  return user !== null;
}
