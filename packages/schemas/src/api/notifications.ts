import { z } from 'zod';
import { emailSchema, quotaField } from './common';
import type { ApiOperation } from './operation';

/** How a low-balance warning is sent (docs/api.md 3.9.6); '' sends none. */
export const NOTIFY_TYPES = ['', 'email', 'webhook'] as const;
export type NotifyType = (typeof NOTIFY_TYPES)[number];

/** Form only (absolute http or https); where it points is checked by the service, which resolves it. */
const webhookUrlSchema = z
  .string()
  .max(2048)
  .refine((text) => {
    if (text === '') return true;
    try {
      const { protocol } = new URL(text);
      return protocol === 'https:' || protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an absolute http or https URL');

/**
 * `PUT /api/user/setting`. An optional field left out keeps its stored value; "" clears it (the
 * warning mail then goes to the account's email).
 */
export const notificationSettingsBody = z
  .object({
    notify_type: z.enum(NOTIFY_TYPES, { error: 'must be "email", "webhook" or "" (none)' }),
    /** Quota; 0 = never warn. */
    quota_warning_threshold: quotaField,
    notification_email: z.union([emailSchema, z.literal('')]).optional(),
    webhook_url: webhookUrlSchema.optional(),
    /** Signs each webhook (HMAC-SHA256); stored encrypted, never returned. */
    webhook_secret: z.union([z.string().min(8).max(256), z.literal('')]).optional(),
  })
  .strict();
export type NotificationSettingsInput = z.input<typeof notificationSettingsBody>;

export const notificationSettingsViewSchema = z.object({
  notify_type: z.enum(NOTIFY_TYPES),
  quota_warning_threshold: z.number().int(),
  /** '' = the account's email. */
  notification_email: z.string(),
  webhook_url: z.string(),
  webhook_secret_set: z.boolean(),
});
export type NotificationSettingsView = z.output<typeof notificationSettingsViewSchema>;

/** docs/api.md 3.9.6: the caller's low-balance warning. */
export const notificationOperations = [
  { method: 'get', path: '/api/user/setting', auth: 'user', summary: 'The caller\'s low-balance warning settings', response: notificationSettingsViewSchema },
  {
    method: 'put',
    path: '/api/user/setting',
    auth: 'user',
    summary: 'Set the low-balance warning: by email or signed webhook, below a threshold',
    body: notificationSettingsBody,
    response: notificationSettingsViewSchema,
  },
] as const satisfies readonly ApiOperation[];
