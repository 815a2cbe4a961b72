import { type ServiceProcess, startRelayProcess } from '@modelgate/testing/processes';
import type { TestAccount } from './app';

/**
 * A real relay process for the channel test, which runs there (docs/api.md 3.3), on the run's
 * database and with the run's CRYPTO_SECRET; the account under test is pointed at it.
 */
export function relayForChannelTests(account: TestAccount): void {
  let relay: ServiceProcess | undefined;
  beforeAll(async () => {
    const started = await startRelayProcess({ CRYPTO_SECRET: process.env.CRYPTO_SECRET! });
    relay = started;
    // The account's RELAY_URL: the port is only known once the relay listens.
    account.deps.env.RELAY_URL = started.url;
  }, 60_000);
  afterAll(async () => {
    relay?.kill('SIGTERM');
    await relay?.exit;
  });
}
