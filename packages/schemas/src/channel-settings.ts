import { z } from 'zod';
import { CHANNEL_TYPES, type ChannelSettings, type ChannelType } from './channel-types';

/** What each settings key accepts (docs/api.md 3.3). */
const SETTING_VALUES: { [K in keyof ChannelSettings]-?: z.ZodType<NonNullable<ChannelSettings[K]>> } = {
  responses: z.enum(['native', 'chat'], { error: 'must be "native" or "chat"' }),
  api_version: z.string().regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, 'must be an API version like 2024-10-21'),
  // Lower-case letters, digits and dashes: it becomes part of a host name.
  region: z.string().regex(/^[a-z][a-z0-9-]{1,30}[a-z0-9]$/, 'must be a region name like us-east-1 or europe-west4'),
  project_id: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'must be a Google Cloud project id'),
};

function isSettingKey(key: string): key is keyof ChannelSettings {
  return Object.hasOwn(SETTING_VALUES, key);
}

export type ChannelSettingsCheck =
  | { ok: true; settings: ChannelSettings }
  /** `field` names the offending entry: `settings.<key>`, or `settings` itself. */
  | { ok: false; field: string; message: string };

/**
 * A channel's `settings` checked against its type (docs/api.md 3.3): a JSON object holding only the
 * keys `CHANNEL_TYPES[type].settings` declares, each with one of its values.
 */
export function checkChannelSettings(type: ChannelType, value: unknown): ChannelSettingsCheck {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, field: 'settings', message: 'must be a JSON object' };
  }
  const facts = CHANNEL_TYPES[type];
  const settings: ChannelSettings = {};
  for (const [key, item] of Object.entries(value)) {
    const field = `settings.${key}`;
    if (!isSettingKey(key) || !facts.settings.includes(key)) {
      return { ok: false, field, message: `channel type ${type} (${facts.label}) has no setting ${JSON.stringify(key)}` };
    }
    const parsed = SETTING_VALUES[key].safeParse(item);
    if (!parsed.success) return { ok: false, field, message: parsed.error.issues[0]?.message ?? 'invalid value' };
    Object.assign(settings, { [key]: parsed.data });
  }
  const incomplete = facts.checkSettings?.(settings);
  if (incomplete) return { ok: false, ...incomplete };
  return { ok: true, settings };
}
