import { createUser, TEST_PASSWORD, type UserOverrides } from '@modelgate/testing';
import type { Express } from 'express';
import request from 'supertest';
import type { TestAccount } from './app';

export type Agent = ReturnType<typeof request.agent>;

export interface LoggedInUser {
  /** Keeps the session cookie and sends `New-Api-User` on every request. */
  agent: Agent;
  id: number;
  username: string;
  password: string;
}

/** Logs in through the API (no second factor) and returns an agent ready for authenticated calls. */
export async function logIn(app: Express, username: string, password = TEST_PASSWORD, ip?: string): Promise<LoggedInUser> {
  const agent = request.agent(app);
  if (ip) agent.set('X-Forwarded-For', ip);
  const res = await agent.post('/api/user/login').send({ username, password });
  if (res.status !== 200 || !res.body.data?.id) throw new Error(`login of ${username} failed: ${res.status} ${JSON.stringify(res.body)}`);
  agent.set('New-Api-User', String(res.body.data.id));
  return { agent, id: res.body.data.id, username, password };
}

/** A user created directly in the database (factory), then logged in through the API. */
export async function loggedInUser(account: TestAccount, overrides: UserOverrides = {}): Promise<LoggedInUser> {
  const user = await createUser(account.prisma, overrides);
  return logIn(account.app, user.username, overrides.password ?? TEST_PASSWORD);
}

export { ROLE } from '@modelgate/schemas';
