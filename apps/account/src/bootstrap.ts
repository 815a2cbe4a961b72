import type { AccountDeps } from './deps';
import { seedOptionsFromEnv } from './features/options/service';
import { ensureRootUser } from './features/users/bootstrap';

/** Boot-time use case: seed options from the environment (first start only) and make sure a root user exists. */
export async function bootstrapAccount(deps: AccountDeps): Promise<void> {
  const seeded = await seedOptionsFromEnv(deps);
  if (seeded.length > 0) deps.logger.info({ options: seeded }, 'options seeded from the environment');
  await ensureRootUser(deps);
}
