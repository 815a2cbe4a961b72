import { notificationBodyOfForm, notificationFormOf, type NotificationFormValues } from '../web/src/pages/settings/notification-form';

const QUOTA_PER_UNIT = 500_000;
const OFF: NotificationFormValues = { notifyType: '', thresholdUsd: '', email: '', webhookUrl: '', webhookSecret: '' };

describe('the low-balance warning form', () => {
  it('shows stored settings with the threshold in USD and no secret', () => {
    expect(
      notificationFormOf(
        { notify_type: 'webhook', quota_warning_threshold: 2_500_000, notification_email: '', webhook_url: 'https://hooks.example.com/a', webhook_secret_set: true },
        QUOTA_PER_UNIT,
      ),
    ).toEqual({ notifyType: 'webhook', thresholdUsd: '5', email: '', webhookUrl: 'https://hooks.example.com/a', webhookSecret: '' });
  });

  it('sends the threshold as quota and only the chosen way\'s fields', () => {
    expect(notificationBodyOfForm({ ...OFF, notifyType: 'email', thresholdUsd: '1.5', webhookUrl: 'https://kept.example.com' }, QUOTA_PER_UNIT, 'me@example.com', false)).toEqual({
      ok: true,
      body: { notify_type: 'email', quota_warning_threshold: 750_000, notification_email: '' },
    });
    expect(
      notificationBodyOfForm({ ...OFF, notifyType: 'webhook', thresholdUsd: '2', webhookUrl: ' https://hooks.example.com/a ', webhookSecret: 'whsec-12345678' }, QUOTA_PER_UNIT, '', false),
    ).toEqual({
      ok: true,
      body: { notify_type: 'webhook', quota_warning_threshold: 1_000_000, webhook_url: 'https://hooks.example.com/a', webhook_secret: 'whsec-12345678' },
    });
    expect(notificationBodyOfForm({ ...OFF, thresholdUsd: '3' }, QUOTA_PER_UNIT, '', false)).toEqual({ ok: true, body: { notify_type: '', quota_warning_threshold: 1_500_000 } });
  });

  it('keeps a stored secret when the field is left empty', () => {
    const result = notificationBodyOfForm({ ...OFF, notifyType: 'webhook', thresholdUsd: '1', webhookUrl: 'https://hooks.example.com/a' }, QUOTA_PER_UNIT, '', true);
    expect(result).toEqual({ ok: true, body: { notify_type: 'webhook', quota_warning_threshold: 500_000, webhook_url: 'https://hooks.example.com/a' } });
  });

  it.each<[string, Partial<NotificationFormValues>, string, keyof NotificationFormValues, string]>([
    ['a threshold of 0 while on', { notifyType: 'email', thresholdUsd: '0' }, 'me@example.com', 'thresholdUsd', 'Enter an amount above 0'],
    ['a negative threshold', { thresholdUsd: '-1' }, '', 'thresholdUsd', 'Enter an amount in USD'],
    ['no address at all', { notifyType: 'email', thresholdUsd: '1' }, '', 'email', 'Enter an address: your account has no email'],
    ['a malformed address', { notifyType: 'email', thresholdUsd: '1', email: 'nope' }, '', 'email', 'Enter a valid email address'],
    ['no URL', { notifyType: 'webhook', thresholdUsd: '1', webhookSecret: 'whsec-12345678' }, '', 'webhookUrl', 'Enter the URL to POST to'],
    ['a URL of another scheme', { notifyType: 'webhook', thresholdUsd: '1', webhookUrl: 'ftp://x.example', webhookSecret: 'whsec-12345678' }, '', 'webhookUrl', 'must be an absolute http or https URL'],
    ['no secret yet', { notifyType: 'webhook', thresholdUsd: '1', webhookUrl: 'https://hooks.example.com' }, '', 'webhookSecret', 'Enter a secret to sign the webhooks with'],
    ['a short secret', { notifyType: 'webhook', thresholdUsd: '1', webhookUrl: 'https://hooks.example.com', webhookSecret: 'short' }, '', 'webhookSecret', 'Use 8 to 256 characters'],
  ])('refuses %s', (_, values, accountEmail, field, message) => {
    const result = notificationBodyOfForm({ ...OFF, ...values }, QUOTA_PER_UNIT, accountEmail, false);
    expect(result.ok).toBe(false);
    expect(result.ok ? undefined : result.errors[field]).toBe(message);
  });
});
