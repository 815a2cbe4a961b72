// docs/api.md 3.9.6: the low-balance warning settings, GET and PUT /api/user/setting.
import { decryptSecret } from '@modelgate/db';
import { notificationSettingsViewSchema } from '@modelgate/schemas';
import { setOption } from '@modelgate/testing';
import request from 'supertest';
import { createTestAccount } from './support/app';
import { expectFailure, expectOk } from './support/envelope';
import { loggedInUser } from './support/users';

const account = createTestAccount();
const { app, prisma } = account;

beforeEach(() => account.reset());
afterAll(() => account.close());

const SECRET = 'whsec-notifications-test-0123';
const PUBLIC_URL = 'https://203.0.113.10/modelgate/hook';

function settingsOf(res: request.Response) {
  return notificationSettingsViewSchema.strict().parse(expectOk(res));
}

describe('GET /api/user/setting', () => {
  it('needs a login, and starts with no warning', async () => {
    expectFailure(await request(app).get('/api/user/setting'), 401, 'unauthorized');
    const user = await loggedInUser(account);
    expect(settingsOf(await user.agent.get('/api/user/setting'))).toEqual({
      notify_type: '',
      quota_warning_threshold: 0,
      notification_email: '',
      webhook_url: '',
      webhook_secret_set: false,
    });
  });
});

describe('warnings by email', () => {
  it('go to the account email when no other address is given', async () => {
    const user = await loggedInUser(account, { email: 'alice@example.com' });
    const saved = settingsOf(await user.agent.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 500_000 }));
    expect(saved).toMatchObject({ notify_type: 'email', quota_warning_threshold: 500_000, notification_email: '' });
    expect(settingsOf(await user.agent.get('/api/user/setting'))).toEqual(saved);
  });

  it('need an address: 400 for an account without email, unless notification_email is given', async () => {
    const user = await loggedInUser(account);
    expectFailure(
      await user.agent.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 1000 }),
      400,
      'invalid_request',
      /^notification_email: /,
    );
    const saved = settingsOf(
      await user.agent.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 1000, notification_email: 'billing@example.com' }),
    );
    expect(saved.notification_email).toBe('billing@example.com');
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect([row.notifyType, row.quotaWarningThreshold, row.notificationEmail]).toEqual(['email', 1000n, 'billing@example.com']);
  });
});

describe('warnings by webhook', () => {
  it('store the secret encrypted and never return it', async () => {
    const user = await loggedInUser(account);
    const res = await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 2000, webhook_url: PUBLIC_URL, webhook_secret: SECRET });
    expect(settingsOf(res)).toEqual({ notify_type: 'webhook', quota_warning_threshold: 2000, notification_email: '', webhook_url: PUBLIC_URL, webhook_secret_set: true });
    const read = await user.agent.get('/api/user/setting');
    expect(settingsOf(read).webhook_secret_set).toBe(true);
    for (const answer of [res, read]) expect(answer.text).not.toContain(SECRET);
    const row = await prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.webhookSecretEnc).not.toContain(SECRET);
    expect(decryptSecret(row.webhookSecretEnc ?? '', account.deps.env.CRYPTO_SECRET)).toBe(SECRET);
    expect(account.logLines.join('\n')).not.toContain(SECRET);
  });

  it('need a URL and a secret', async () => {
    const user = await loggedInUser(account);
    expectFailure(
      await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 1, webhook_secret: SECRET }),
      400,
      'invalid_request',
      /^webhook_url: required/,
    );
    expectFailure(
      await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 1, webhook_url: PUBLIC_URL }),
      400,
      'invalid_request',
      /^webhook_secret: required/,
    );
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).notifyType).toBe('');
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:8080/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'http://172.20.0.1/hook',
    'http://100.64.1.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/hook',
    'http://[fd00::1]/hook',
    'http://224.0.0.1/hook',
    'http://0.0.0.0/hook',
  ])('refuse %s (private, loopback or otherwise not public) unless WebhookAllowPrivate', async (url) => {
    const user = await loggedInUser(account);
    const body = { notify_type: 'webhook', quota_warning_threshold: 1000, webhook_url: url, webhook_secret: SECRET };
    const refused = await user.agent.put('/api/user/setting').send(body);
    expectFailure(refused, 400, 'invalid_request', /^webhook_url: .*non-public address/);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).webhookUrl).toBeNull();

    await setOption(prisma, 'WebhookAllowPrivate', true);
    expect(settingsOf(await user.agent.put('/api/user/setting').send(body)).webhook_url).toBe(url);
  });

  it('refuse a host name that does not resolve, and URLs that are not http(s) or carry credentials', async () => {
    const user = await loggedInUser(account);
    const put = (webhook_url: string) =>
      user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 1, webhook_url, webhook_secret: SECRET });
    expectFailure(await put('https://no-such-host.invalid/hook'), 400, 'invalid_request', /^webhook_url: the host name does not resolve/);
    expectFailure(await put('ftp://203.0.113.10/hook'), 400, 'invalid_request', /^webhook_url: /);
    expectFailure(await put('/relative/hook'), 400, 'invalid_request', /^webhook_url: /);
    expectFailure(await put('https://me:password@203.0.113.10/hook'), 400, 'invalid_request', /^webhook_url: must not contain/);
  });

  it('keep what a PUT leaves out; "" clears it', async () => {
    const user = await loggedInUser(account, { email: 'bob@example.com' });
    settingsOf(await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 10, webhook_url: PUBLIC_URL, webhook_secret: SECRET }));
    // A new threshold alone keeps URL and secret.
    expect(settingsOf(await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 20 }))).toMatchObject({
      quota_warning_threshold: 20,
      webhook_url: PUBLIC_URL,
      webhook_secret_set: true,
    });
    // Switching to email keeps the webhook for later; clearing the secret then makes webhooks need a new one.
    expect(settingsOf(await user.agent.put('/api/user/setting').send({ notify_type: 'email', quota_warning_threshold: 20, webhook_secret: '' }))).toMatchObject({
      notify_type: 'email',
      webhook_url: PUBLIC_URL,
      webhook_secret_set: false,
    });
    expectFailure(await user.agent.put('/api/user/setting').send({ notify_type: 'webhook', quota_warning_threshold: 20 }), 400, 'invalid_request', /^webhook_secret: /);
    // Off.
    expect(settingsOf(await user.agent.put('/api/user/setting').send({ notify_type: '', quota_warning_threshold: 0 }))).toMatchObject({
      notify_type: '',
      quota_warning_threshold: 0,
    });
  });
});

describe('bad input', () => {
  it.each([
    [{ notify_type: 'sms', quota_warning_threshold: 1 }, 'notify_type'],
    [{ quota_warning_threshold: 1 }, 'notify_type'],
    [{ notify_type: 'email' }, 'quota_warning_threshold'],
    [{ notify_type: 'email', quota_warning_threshold: -1 }, 'quota_warning_threshold'],
    [{ notify_type: 'email', quota_warning_threshold: 1.5 }, 'quota_warning_threshold'],
    [{ notify_type: 'email', quota_warning_threshold: '1000' }, 'quota_warning_threshold'],
    [{ notify_type: 'email', quota_warning_threshold: 1, notification_email: 'not-an-email' }, 'notification_email'],
    [{ notify_type: 'webhook', quota_warning_threshold: 1, webhook_secret: 'short' }, 'webhook_secret'],
    [{ notify_type: 'email', quota_warning_threshold: 1, webhook_secret_set: true }, 'webhook_secret_set'],
  ])('%j -> 400 naming %s', async (body, param) => {
    const user = await loggedInUser(account, { email: 'carol@example.com' });
    expectFailure(await user.agent.put('/api/user/setting').send(body), 400, 'invalid_request', new RegExp(`^(unknown field: )?${param}\\b`));
  });
});
