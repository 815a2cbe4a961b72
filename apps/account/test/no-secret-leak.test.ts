import { createChannel } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectOk } from './support/envelope';
import { FakeUpstream } from './support/fake-upstream';
import { relayForChannelTests } from './support/relay';
import { TOTP_STEP_MS, totpAt } from './support/totp';
import { logIn, loggedInUser, ROLE } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;
const upstream = new FakeUpstream();
let baseUrl: string;
relayForChannelTests(account);

beforeAll(async () => {
  baseUrl = await upstream.start();
});
beforeEach(() => account.reset());
afterAll(async () => {
  await upstream.stop();
  await account.close();
});

/** Every response of the flow, headers and body, as the client saw it. */
const seen: string[] = [];
function record(res: request.Response): request.Response {
  seen.push(JSON.stringify(res.headers), res.text);
  return res;
}

it('no response or log line ever carries a password, TOTP secret, backup code, API key or channel key', async () => {
  const password = 'Pa55word-initial-91';
  const wrongPassword = 'Wrong-guess-password-77';
  const newPassword = 'Pa55word-changed-42';
  const channelKey = 'sk-channel-secret-5d1e0c3b';

  record(await request(app).post('/api/user/register').send({ username: 'leaky', password }));
  record(await request(app).post('/api/user/login').send({ username: 'leaky', password: wrongPassword }));
  const user = await logIn(app, 'leaky', password);

  const setup = expectOk(await user.agent.post('/api/user/2fa/setup')) as { secret: string; backup_codes: string[] };
  const enableCode = totpAt(setup.secret, account.clock);
  record(await user.agent.post('/api/user/2fa/enable').send({ code: enableCode }));
  account.clock.advance(TOTP_STEP_MS);
  const twoStep = request.agent(app);
  record(await twoStep.post('/api/user/login').send({ username: 'leaky', password }));
  record(await twoStep.post('/api/user/login/2fa').send({ code: setup.backup_codes[0] }));
  record(await twoStep.post('/api/user/login/2fa').send({ code: setup.backup_codes[0] }));
  record(await user.agent.post('/api/user/2fa/backup_codes').send({ code: totpAt(setup.secret, account.clock) }));
  record(await user.agent.get('/api/user/2fa/status'));
  record(await user.agent.get('/api/user/self'));

  const created = expectOk(await user.agent.post('/api/token/').send({ name: 'leak-check' })) as { id: number; key: string };
  const apiKey = created.key;
  record(await user.agent.get('/api/token/'));
  record(await user.agent.get(`/api/token/${created.id}`));
  record(await user.agent.put('/api/token/').send({ id: created.id, name: 'renamed' }));

  const admin = await loggedInUser(account, { role: ROLE.root });
  const channel = expectOk(record(await admin.agent.post('/api/channel/').send({ name: 'c', type: 1, key: channelKey, models: 'm', base_url: baseUrl }))) as { id: number };
  upstream.reply = { status: 401, body: { error: { message: `invalid key ${channelKey}` } } };
  record(await admin.agent.get(`/api/channel/test/${channel.id}`));
  record(await admin.agent.get(`/api/channel/${channel.id}`));
  record(await admin.agent.get('/api/channel/'));
  record(await admin.agent.put('/api/option/').send({ key: 'StripeApiSecret', value: 'sk_live_option_secret' }));
  record(await admin.agent.get('/api/option/'));
  record(await admin.agent.get('/api/user/'));
  record(await admin.agent.get('/api/log/'));

  record(await user.agent.put('/api/user/self').send({ password: newPassword, original_password: password }));
  record(await user.agent.put('/api/user/self').send({ password: newPassword, original_password: wrongPassword }));
  record(await request(app).post('/api/user/login').send({ username: 'leaky', password: newPassword }));

  // A key the relay cannot decrypt: the test says so, without the key or the reason's details.
  const broken = await createChannel(prisma, { key: channelKey, cryptoSecret: 'another-secret-entirely-0123456789' });
  const failure = expectOk(record(await admin.agent.get(`/api/channel/test/${broken.id}`)));
  expect(failure).toMatchObject({ success: false, message: expect.stringMatching(/^the relay cannot use this channel: unreadable key/) });

  const secrets = [password, wrongPassword, newPassword, setup.secret, ...setup.backup_codes, enableCode, apiKey, apiKey.slice(3), channelKey, 'sk_live_option_secret'];
  const logs = account.logLines.join('\n');
  expect(account.logLines.length).toBeGreaterThan(20);
  for (const secret of secrets) {
    expect({ secret, inResponses: seen.some((text) => text.includes(secret)), inLogs: logs.includes(secret) })
      .toEqual({ secret, inResponses: false, inLogs: false });
  }
  expect(logs).not.toMatch(/\n\s+at \S+ \(/);
  expect(seen.join('\n')).not.toMatch(/\bat \S+ \(|SELECT |prisma/i);
});
