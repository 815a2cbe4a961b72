import { ApiError } from '@modelgate/client';
import { channelCreateBody, type channelUpdateBody, type ChannelView } from '@modelgate/schemas/api';
import { checkChannelSettings } from '@modelgate/schemas/channel-settings';
import { z } from 'zod';
import {
  AZURE_API_VERSION,
  CHANNEL_TYPE,
  CHANNEL_TYPES,
  channelAddressChanges,
  type ChannelSettings,
  type ChannelType,
  isChannelType,
  needsBaseUrl,
  VERTEX_DEFAULT_REGION,
} from '@modelgate/schemas/channel-types';
import { CHANNEL_STATUS } from '@modelgate/schemas/domain';
import { indentedJson } from '../../../lib/json';

/** How a type 1 channel reaches `/v1/responses` upstream (docs/api.md 2.10); native is the default. */
export const RESPONSES_MODES = ['native', 'chat'] as const satisfies readonly NonNullable<ChannelSettings['responses']>[];
export type ResponsesMode = (typeof RESPONSES_MODES)[number];

/** The settings typed as text (docs/api.md 2.12); an empty one is left out, so its default applies. */
export const TEXT_SETTINGS = ['api_version', 'region', 'project_id'] as const satisfies readonly (keyof ChannelSettings)[];
export type TextSetting = (typeof TEXT_SETTINGS)[number];

/** The settings as the form holds them: every type's, of which a save sends only its type's. */
export type SettingValues = { responses: ResponsesMode } & Record<TextSetting, string>;

const SETTING_FIELDS = ['responses', ...TEXT_SETTINGS] as const;
const BODY_FIELDS = ['name', 'type', 'key', 'base_url', 'models', 'groups', 'priority', 'weight', 'model_mapping'] as const;
/** The form's fields that show an error beside them (docs/api.md 3.3 body fields, settings by key). */
export type ChannelFormField = (typeof BODY_FIELDS)[number] | (typeof SETTING_FIELDS)[number];

/** The key as typed: on edit, '' keeps the stored key (answers never carry it). */
const keyOrKeep = channelCreateBody.shape.key.or(z.literal(''));

/** The example endpoint of a type that has no default base URL (docs/api.md 2.12). */
const ENDPOINT_EXAMPLES: Partial<Record<ChannelType, string>> = { [CHANNEL_TYPE.azure]: 'https://<resource>.openai.azure.com' };

/** A service account key file is about 2.3 KB: a much larger file is not one, and is not read into the page. */
const KEY_FILE_MAX_BYTES = 64 * 1024;

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

/** The form field an API field names (`key`, `settings.region`, ...), when the form has it. */
function formFieldOf(apiField: string): ChannelFormField | undefined {
  if (apiField.startsWith('settings.')) {
    const setting = apiField.slice('settings.'.length);
    return SETTING_FIELDS.find((field) => field === setting);
  }
  return BODY_FIELDS.find((field) => field === apiField);
}

/**
 * What the type's own rules refuse (docs/api.md 2.12), by field: the account service's checks of the
 * key's form, a required base URL and the settings, so the admin sees them before anything is sent.
 */
function typeProblems(type: ChannelType, values: { key: string; base_url: string } & SettingValues): { field: ChannelFormField; message: string }[] {
  const facts = CHANNEL_TYPES[type];
  const problems: { field: ChannelFormField; message: string }[] = [];
  const keyProblem = values.key === '' ? undefined : facts.checkKey?.(values.key);
  if (keyProblem) problems.push({ field: 'key', message: keyProblem });
  if (needsBaseUrl(type) && values.base_url.trim() === '') {
    problems.push({ field: 'base_url', message: `${facts.label} channels need their endpoint here${endpointExample(type)}` });
  }
  const settings = checkChannelSettings(type, settingsOf(type, values));
  // settingsOf sends only declared keys as text, so a refusal always names one of their fields.
  if (!settings.ok) problems.push({ field: formFieldOf(settings.field) ?? 'type', message: settings.message });
  return problems;
}

function endpointExample(type: ChannelType): string {
  const example = ENDPOINT_EXAMPLES[type];
  return example ? `, e.g. ${example}` : '';
}

/**
 * The channel form for a new channel, or for editing `channel`: the create body's fields with their
 * defaults filled in, the key optional on edit unless the address changes, and the type's settings
 * as form fields (sent as `settings`, see `settingsOf`), all checked as the account service checks them.
 */
export function channelFormSchema(channel?: ChannelView) {
  return channelCreateBody
    .omit({ status: true, settings: true })
    .required({ base_url: true, groups: true, priority: true, weight: true, model_mapping: true, auto_ban: true })
    .extend({ key: keyOrKeep, responses: z.enum(RESPONSES_MODES), api_version: z.string(), region: z.string(), project_id: z.string() })
    .superRefine((values, ctx) => {
      if (values.key === '') {
        if (!channel) ctx.addIssue({ code: 'custom', path: ['key'], message: 'Enter the upstream API key' });
        else if (movesStoredKey(channel, values)) ctx.addIssue({ code: 'custom', path: ['key'], message: 'Enter the key for the new address' });
      }
      // Also run when other fields failed: then the type may be what was typed, not a known one.
      if (!isChannelType(values.type)) return;
      for (const { field, message } of typeProblems(values.type, values)) ctx.addIssue({ code: 'custom', path: [field], message });
    });
}

type ChannelFormSchema = ReturnType<typeof channelFormSchema>;
export type ChannelFormInput = z.input<ChannelFormSchema>;
export type ChannelFormOutput = z.output<ChannelFormSchema>;

function storedText(settings: Record<string, unknown>, key: TextSetting): string {
  const value = settings[key];
  return typeof value === 'string' ? value : '';
}

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
      api_version: '',
      region: '',
      project_id: '',
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
    api_version: storedText(channel.settings, 'api_version'),
    region: storedText(channel.settings, 'region'),
    project_id: storedText(channel.settings, 'project_id'),
  };
}

/** Only the settings the type declares: sent with every save, so a type change leaves none invalid. */
export function settingsOf(type: ChannelType, values: SettingValues): ChannelSettings {
  const settings: ChannelSettings = {};
  for (const key of CHANNEL_TYPES[type].settings) {
    if (key === 'responses') settings.responses = values.responses;
    else if (values[key].trim() !== '') settings[key] = values[key].trim();
  }
  return settings;
}

export type ChannelCreateBody = z.input<typeof channelCreateBody>;
export type ChannelUpdateBody = z.input<typeof channelUpdateBody>;

export function createBodyOf(values: ChannelFormOutput): ChannelCreateBody {
  const { responses, api_version, region, project_id, ...fields } = values;
  return { ...fields, settings: settingsOf(values.type, { responses, api_version, region, project_id }) };
}

/** The edit's PUT body: every field, but the key only when a new one was typed. */
export function updateBodyOf(id: number, values: ChannelFormOutput): ChannelUpdateBody {
  const { key, ...fields } = createBodyOf(values);
  return key === '' ? { id, ...fields } : { id, key, ...fields };
}

export interface FieldCopy {
  label: string;
  placeholder: string;
  hint: string;
  required: boolean;
}

function isTextSetting(key: keyof ChannelSettings): key is TextSetting {
  return TEXT_SETTINGS.some((setting) => setting === key);
}

function settingField(type: ChannelType, key: TextSetting): FieldCopy {
  switch (key) {
    case 'api_version':
      return { label: 'API version', placeholder: AZURE_API_VERSION, hint: `The api-version of Azure OpenAI’s calls. Empty: ${AZURE_API_VERSION}`, required: false };
    case 'region':
      return type === CHANNEL_TYPE.bedrock
        ? { label: 'Region', placeholder: 'us-east-1', hint: 'Required: the AWS region of the Bedrock runtime, e.g. us-east-1', required: true }
        : { label: 'Region', placeholder: VERTEX_DEFAULT_REGION, hint: `The Google Cloud location, e.g. us-central1. Empty: ${VERTEX_DEFAULT_REGION}`, required: false };
    case 'project_id':
      return { label: 'Project ID', placeholder: 'From the key file', hint: 'The Google Cloud project. Empty: the key file’s project_id', required: false };
  }
}

/** The text settings the type declares (docs/api.md 2.12), each with its field's label, example and hint. */
export function settingFieldsOf(type: ChannelType): (FieldCopy & { key: TextSetting })[] {
  return CHANNEL_TYPES[type].settings.filter(isTextSetting).map((key) => ({ key, ...settingField(type, key) }));
}

/**
 * The base URL field: required with an example where the type has no default, otherwise the
 * address an empty one means, its region filled in once a valid one is typed (docs/api.md 2.12).
 */
export function baseUrlFieldOf(type: ChannelType, region: string): Omit<FieldCopy, 'label'> {
  const facts = CHANNEL_TYPES[type];
  if (needsBaseUrl(type)) {
    return { placeholder: ENDPOINT_EXAMPLES[type] ?? '', hint: `Required: the ${facts.label} endpoint${endpointExample(type)}`, required: true };
  }
  const typed = region.trim();
  const settings = facts.defaultBaseUrlFor ? checkChannelSettings(type, typed ? { region: typed } : {}) : undefined;
  const address = facts.defaultBaseUrlFor && settings?.ok ? facts.defaultBaseUrlFor(settings.settings) : facts.defaultBaseUrl;
  return { placeholder: address, hint: `Empty: ${address}`, required: false };
}

/** Whom a Vertex AI key file signs in as, to confirm the file read or pasted; undefined when the key is not one. */
export function serviceAccountOf(key: string): { clientEmail: string; projectId: string | undefined } | undefined {
  let file: unknown;
  try {
    file = JSON.parse(key);
  } catch {
    return undefined;
  }
  if (file === null || typeof file !== 'object') return undefined;
  const { client_email: clientEmail, project_id: projectId } = file as Record<string, unknown>;
  if (typeof clientEmail !== 'string' || clientEmail === '') return undefined;
  return { clientEmail, projectId: typeof projectId === 'string' && projectId !== '' ? projectId : undefined };
}

/** A key file chosen in the form, read in the browser (it is sent only as the channel's key). */
export async function readKeyFile(file: Blob): Promise<{ ok: true; key: string } | { ok: false; message: string }> {
  if (file.size > KEY_FILE_MAX_BYTES) return { ok: false, message: 'This file is too large to be a key file' };
  try {
    return { ok: true, key: (await file.text()).trim() };
  } catch {
    return { ok: false, message: 'The file could not be read' };
  }
}

/**
 * The field a refused save names, and why: the account service's 400s begin with the API field
 * (`key: ...`, `settings.region: ...`). Undefined for any other failure.
 */
export function serverFieldError(error: unknown): { field: ChannelFormField; message: string } | undefined {
  if (!(error instanceof ApiError) || error.status !== 400) return undefined;
  const named = /^([\w.]+): (.+)$/s.exec(error.message);
  const field = named?.[1] === undefined ? undefined : formFieldOf(named[1]);
  return field && named?.[2] ? { field, message: named[2] } : undefined;
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
