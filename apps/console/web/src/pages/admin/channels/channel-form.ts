import { channelCreateBody, type channelUpdateBody, type ChannelView } from '@modelgate/schemas/api';
import { z } from 'zod';
import { CHANNEL_TYPE, CHANNEL_TYPES, channelAddressChanges, type ChannelSettings, type ChannelType, isChannelType } from '@modelgate/schemas/channel-types';
import { CHANNEL_STATUS } from '@modelgate/schemas/domain';
import { indentedJson } from '../../../lib/json';

/** How a type 1 channel reaches `/v1/responses` upstream (docs/api.md 2.10); native is the default. */
export const RESPONSES_MODES = ['native', 'chat'] as const satisfies readonly NonNullable<ChannelSettings['responses']>[];
export type ResponsesMode = (typeof RESPONSES_MODES)[number];

/** The key as typed: on edit, '' keeps the stored key (answers never carry it). */
const keyOrKeep = channelCreateBody.shape.key.or(z.literal(''));

/**
 * Whether saving an edited channel with this type and base URL (as typed) would send its stored key
 * to another address: then a new key is required (docs/api.md 3.7). Never for a new channel.
 */
export function movesStoredKey(channel: ChannelView | undefined, values: { type: number; base_url: string }): boolean {
  if (!channel) return false;
  const typed = channelCreateBody.shape.base_url.safeParse(values.base_url);
  const baseUrl = typed.success && typed.data !== undefined ? typed.data : values.base_url;
  return channelAddressChanges({ type: channel.type, baseUrl: channel.base_url }, { type: values.type, baseUrl });
}

/**
 * The channel form for a new channel, or for editing `channel`: the create body's fields with their
 * defaults filled in, the key optional on edit unless the address changes, and the type's settings
 * as form fields (sent as `settings`, see `settingsOf`).
 */
export function channelFormSchema(channel?: ChannelView) {
  return channelCreateBody
    .omit({ status: true, settings: true })
    .required({ base_url: true, groups: true, priority: true, weight: true, model_mapping: true, auto_ban: true })
    .extend({ key: keyOrKeep, responses: z.enum(RESPONSES_MODES) })
    .superRefine((values, ctx) => {
      if (values.key !== '') return;
      if (!channel) ctx.addIssue({ code: 'custom', path: ['key'], message: 'Enter the upstream API key' });
      else if (movesStoredKey(channel, values)) ctx.addIssue({ code: 'custom', path: ['key'], message: 'Enter the key for the new address' });
    });
}

type ChannelFormSchema = ReturnType<typeof channelFormSchema>;
export type ChannelFormInput = z.input<ChannelFormSchema>;
export type ChannelFormOutput = z.output<ChannelFormSchema>;

/** The form's starting values: the channel's (its key left empty), or a new channel's defaults (docs/api.md 3.3). */
export function channelFormDefaults(channel?: ChannelView): ChannelFormInput {
  if (!channel) {
    return {
      name: '',
      type: CHANNEL_TYPE.openai,
      key: '',
      base_url: '',
      models: '',
      groups: 'default',
      priority: 0,
      weight: 0,
      model_mapping: '',
      auto_ban: true,
      responses: 'native',
    };
  }
  return {
    name: channel.name,
    type: isChannelType(channel.type) ? channel.type : CHANNEL_TYPE.openai,
    key: '',
    base_url: channel.base_url,
    models: channel.models,
    groups: channel.groups,
    priority: channel.priority,
    weight: channel.weight,
    model_mapping: indentedJson(channel.model_mapping),
    auto_ban: channel.auto_ban,
    responses: channel.settings.responses === 'chat' ? 'chat' : 'native',
  };
}

/** Only the settings the type declares: sent with every save, so a type change leaves none invalid. */
export function settingsOf(type: ChannelType, responses: ResponsesMode): ChannelSettings {
  return CHANNEL_TYPES[type].settings.includes('responses') ? { responses } : {};
}

export type ChannelCreateBody = z.input<typeof channelCreateBody>;
export type ChannelUpdateBody = z.input<typeof channelUpdateBody>;

export function createBodyOf(values: ChannelFormOutput): ChannelCreateBody {
  const { responses, ...fields } = values;
  return { ...fields, settings: settingsOf(values.type, responses) };
}

/** The edit's PUT body: every field, but the key only when a new one was typed. */
export function updateBodyOf(id: number, values: ChannelFormOutput): ChannelUpdateBody {
  const { key, ...fields } = createBodyOf(values);
  return key === '' ? { id, ...fields } : { id, key, ...fields };
}

export function channelTypeLabel(type: number): string {
  return isChannelType(type) ? CHANNEL_TYPES[type].label : `Type ${type}`;
}

/** A channel status for its badge (docs/api.md 2.4: 3 is set by the relay). */
export function channelStatusOf(status: number): { label: string; tone: 'ok' | 'off' } {
  if (status === CHANNEL_STATUS.enabled) return { label: 'Enabled', tone: 'ok' };
  if (status === CHANNEL_STATUS.autoDisabled) return { label: 'Auto-disabled', tone: 'off' };
  return { label: 'Disabled', tone: 'off' };
}
