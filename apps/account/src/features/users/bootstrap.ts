import { randomBytes } from 'node:crypto';
import { ROLE } from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { isUniqueViolation } from '../../lib/db';
import { randomAlphanumeric } from '../../lib/random';
import { hashPassword } from '../auth/passwords';
import { AFF_CODE_LENGTH } from './fields';
import { hasRootUser, insertUser } from './repository';

export type RootBootstrap = { created: false } | { created: true; username: string; generatedPassword?: string };

/**
 * docs/api.md 1.2: when no root user exists, create ROOT_USERNAME with ROOT_PASSWORD, or with a
 * generated password that is logged once (the only secret ever logged, so the operator can log in).
 * There is no default password.
 */
export async function ensureRootUser(deps: AccountDeps): Promise<RootBootstrap> {
  if (await hasRootUser(deps.prisma, ROLE.root)) return { created: false };
  const username = deps.env.ROOT_USERNAME;
  const generatedPassword = deps.env.ROOT_PASSWORD ? undefined : randomBytes(18).toString('base64url');
  const password = deps.env.ROOT_PASSWORD ?? generatedPassword!;
  try {
    await insertUser(deps.prisma, {
      username,
      passwordHash: await hashPassword(password, deps.env.PASSWORD_HASH_MEMORY_KIB),
      displayName: 'Root User',
      role: ROLE.root,
      affCode: randomAlphanumeric(AFF_CODE_LENGTH),
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Another instance created it meanwhile, or a user already holds this name.
    if (await hasRootUser(deps.prisma, ROLE.root)) return { created: false };
    deps.logger.error({ username }, 'cannot create the root user: the username is taken by a non-root user; set ROOT_USERNAME');
    return { created: false };
  }
  if (generatedPassword) {
    deps.logger.warn(
      { username },
      `created root user "${username}" with generated password: ${generatedPassword} ` +
        '(shown once, never logged again: log in and change it now)',
    );
  } else {
    deps.logger.info({ username }, `created root user "${username}" with the password from ROOT_PASSWORD`);
  }
  return { created: true, username, generatedPassword };
}
