import { isIP } from 'node:net';
import { readOptions } from '@modelgate/schemas';
import type { AccountDeps } from './deps';
import { seedOptionsFromEnv } from './features/options/service';
import { ensureRootUser } from './features/users/bootstrap';

/** Boot-time use case: seed options from the environment (first start only) and make sure a root user exists. */
export async function bootstrapAccount(deps: AccountDeps): Promise<void> {
  const seeded = await seedOptionsFromEnv(deps);
  if (seeded.length > 0) deps.logger.info({ options: seeded }, 'options seeded from the environment');
  await warnOfLocalServerAddress(deps);
  await ensureRootUser(deps);
}

/**
 * Stripe sends payers back to ServerAddress (docs/api.md 3.7). An install that takes payments while
 * it is still the local default (PUBLIC_URL unset at first start) would send them to their own
 * machine: say so at every start until root sets it.
 */
async function warnOfLocalServerAddress(deps: AccountDeps): Promise<void> {
  const { ServerAddress, StripeApiSecret } = await readOptions(deps.prisma);
  if (!StripeApiSecret || !isLocalAddress(ServerAddress)) return;
  deps.logger.warn(
    { serverAddress: ServerAddress },
    'Stripe is configured but ServerAddress is a local address: payers would return to their own machine; set ServerAddress under Options (or PUBLIC_URL before the first start)',
  );
}

function isLocalAddress(address: string): boolean {
  const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
