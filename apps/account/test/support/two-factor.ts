import request from 'supertest';
import type { TestAccount } from './app';
import { expectOk } from './envelope';
import { TOTP_STEP_MS, totpAt } from './totp';
import type { Agent, LoggedInUser } from './users';

export interface TwoFactorSetup {
  secret: string;
  qr_code_data: string;
  backup_codes: string[];
}

/** Sets up and enables 2FA for the user; the clock then moves on a step so the enabling code is not reused by accident. */
export async function enableTwoFactor(account: TestAccount, user: LoggedInUser): Promise<TwoFactorSetup> {
  const setup = expectOk(await user.agent.post('/api/user/2fa/setup')) as TwoFactorSetup;
  expectOk(await user.agent.post('/api/user/2fa/enable').send({ code: totpAt(setup.secret, account.clock) }));
  account.clock.advance(TOTP_STEP_MS);
  return setup;
}

/** Password step of a 2FA login: the agent holds a pending login. */
export async function passwordStep(account: TestAccount, user: LoggedInUser): Promise<Agent> {
  const agent = request.agent(account.app);
  const res = await agent.post('/api/user/login').send({ username: user.username, password: user.password });
  expect(expectOk(res)).toEqual({ require_2fa: true });
  agent.set('New-Api-User', String(user.id));
  return agent;
}
