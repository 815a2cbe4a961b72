import { type ChannelModel, encryptSecret, type Prisma } from '@modelgate/db';
import { internalApiToken } from '@modelgate/config';
import { AppError } from '@modelgate/errors';
import {
  CHANNEL_STATUS,
  CHANNEL_TYPES,
  channelAddressChanges,
  type ChannelType,
  type ChannelView,
  checkChannelSettings,
  isChannelType,
  needsBaseUrl,
} from '@modelgate/schemas';
import type { AccountDeps } from '../../deps';
import { nowMs, unixSeconds } from '../../lib/clock';
import type { Page, PageRequest } from '../../lib/envelope';
import { publishInvalidation } from '../../lib/invalidation';
import { deleteChannels, findChannel, findChannelPage, insertChannel, recordTestResult, updateChannel } from './repository';
import { testThroughRelay } from './relay-test';

/** A channel as admins see it: everything but the key. */
function channelView(channel: ChannelModel): ChannelView {
  return {
    id: channel.id,
    type: channel.type,
    name: channel.name,
    base_url: channel.baseUrl,
    models: channel.models,
    groups: channel.groups,
    priority: channel.priority,
    weight: channel.weight,
    model_mapping: channel.modelMapping,
    status: channel.status,
    status_reason: channel.statusReason,
    status_changed_at: unixSeconds(channel.statusChangedAt),
    auto_ban: channel.autoBan,
    // Written only through settingsFor: always an object.
    settings: channel.settings as Prisma.JsonObject,
    used_quota: Number(channel.usedQuota),
    response_time_ms: channel.responseTimeMs,
    tested_at: unixSeconds(channel.testedAt),
    created_at: unixSeconds(channel.createdAt),
  };
}

/** Validated by the router; lists already normalised, model_mapping already JSON text. */
export interface ChannelFields {
  name?: string;
  type?: ChannelType;
  key?: string;
  base_url?: string;
  models?: string;
  groups?: string;
  priority?: number;
  weight?: number;
  model_mapping?: string;
  auto_ban?: boolean;
  status?: number;
  /** Checked here against the channel's type (the router cannot know it on update). */
  settings?: unknown;
}

/** docs/api.md 3.3: only the settings the type declares, or 400 naming the field (`settings.<key>`). */
function settingsFor(type: ChannelType, value: unknown): Prisma.InputJsonObject {
  const checked = checkChannelSettings(type, value);
  if (!checked.ok) throw new AppError('invalid_request', `${checked.field}: ${checked.message}`, { param: checked.field });
  return { ...checked.settings };
}

/** The settings an update stores: checked again when the type changes, since they must suit the new type. */
function settingsAfterEdit(current: ChannelModel, input: ChannelFields): Prisma.InputJsonObject | undefined {
  if (input.settings === undefined && (input.type === undefined || input.type === current.type)) return undefined;
  const type = input.type ?? current.type;
  if (!isChannelType(type)) throw new AppError('invalid_request', `type: channel type ${type} is not supported`, { param: 'type' });
  return settingsFor(type, input.settings === undefined ? current.settings : input.settings);
}

function statusColumns(deps: AccountDeps, status: number | undefined) {
  if (status === undefined) return {};
  return {
    status,
    statusReason: status === CHANNEL_STATUS.manuallyDisabled ? 'disabled by an admin' : '',
    statusChangedAt: new Date(nowMs(deps)),
  };
}

/**
 * docs/api.md 2.12: a key in the form the type takes (an AWS key pair, a service account key file)
 * and a base URL where the type has no default (Azure's resource endpoint); 400 naming the field.
 */
function checkCredentialAndAddress(type: ChannelType, key: string | undefined, baseUrl: string): void {
  const facts = CHANNEL_TYPES[type];
  const problem = key === undefined ? undefined : facts.checkKey?.(key);
  if (problem) throw new AppError('invalid_request', `key: ${problem} (${facts.label})`, { param: 'key' });
  if (needsBaseUrl(type) && baseUrl.trim() === '') {
    throw new AppError('invalid_request', `base_url: ${facts.label} channels need their endpoint as base_url`, { param: 'base_url' });
  }
}

export async function createChannel(deps: AccountDeps, input: ChannelFields & Required<Pick<ChannelFields, 'name' | 'type' | 'key' | 'models'>>) {
  checkCredentialAndAddress(input.type, input.key, input.base_url ?? '');
  const channel = await insertChannel(deps.prisma, {
    name: input.name,
    type: input.type,
    keyEnc: encryptSecret(input.key, deps.env.CRYPTO_SECRET),
    // '' means the type's default, resolved where it is used: a later type change then follows.
    baseUrl: input.base_url ?? '',
    models: input.models,
    groups: input.groups || 'default',
    priority: input.priority,
    weight: input.weight,
    modelMapping: input.model_mapping,
    autoBan: input.auto_ban,
    settings: settingsFor(input.type, input.settings === undefined ? {} : input.settings),
    ...statusColumns(deps, input.status),
  });
  await publishInvalidation(deps, { kind: 'channels' });
  return channelView(channel);
}

export async function listChannels(deps: AccountDeps, page: PageRequest): Promise<Page<ChannelView>> {
  const { total, rows } = await findChannelPage(deps.prisma, page.skip, page.pageSize);
  return { page: page.page, page_size: page.pageSize, total, items: rows.map(channelView) };
}

async function requireChannel(deps: AccountDeps, id: number): Promise<ChannelModel> {
  const channel = await findChannel(deps.prisma, id);
  if (!channel) throw new AppError('not_found', 'channel not found');
  return channel;
}

export async function getChannel(deps: AccountDeps, id: number): Promise<ChannelView> {
  return channelView(await requireChannel(deps, id));
}

export async function editChannel(deps: AccountDeps, id: number, input: ChannelFields): Promise<ChannelView> {
  const current = await requireChannel(deps, id);
  const keepsKey = input.key === undefined;
  // docs/api.md 3.7: the stored key only ever goes to the address it was entered for.
  if (keepsKey && channelAddressChanges(current, { type: input.type, baseUrl: input.base_url })) {
    throw new AppError('invalid_request', 'key: changing base_url or type needs the key again (a stored key only goes to the address it was entered for)', {
      param: 'key',
    });
  }
  const type = input.type ?? current.type;
  const baseUrl = input.base_url ?? baseUrlAfterTypeChange(current, input.type);
  if (isChannelType(type)) checkCredentialAndAddress(type, input.key, baseUrl ?? current.baseUrl);
  // Without a new key, the write holds only while the row keeps the address just checked, so a concurrent edit cannot move it.
  const unchangedAddress = keepsKey ? { type: current.type, baseUrl: current.baseUrl } : undefined;
  const updated = await updateChannel(deps.prisma, id, {
    name: input.name,
    type: input.type,
    keyEnc: input.key === undefined ? undefined : encryptSecret(input.key, deps.env.CRYPTO_SECRET),
    baseUrl,
    models: input.models,
    groups: input.groups === undefined ? undefined : input.groups || 'default',
    priority: input.priority,
    weight: input.weight,
    modelMapping: input.model_mapping,
    autoBan: input.auto_ban,
    settings: settingsAfterEdit(current, input),
    ...(input.status === current.status ? {} : statusColumns(deps, input.status)),
  }, unchangedAddress);
  if (!updated) {
    if (unchangedAddress && (await findChannel(deps.prisma, id))) throw new AppError('conflict', 'the channel was changed meanwhile: reload it and try again');
    throw new AppError('not_found', 'channel not found');
  }
  await publishInvalidation(deps, { kind: 'channels' });
  return channelView(updated);
}

/**
 * A row holding its old type's default verbatim (written before defaults were resolved at use)
 * goes back to '' when the type changes, so it follows the new type's default.
 */
function baseUrlAfterTypeChange(current: ChannelModel, type: ChannelType | undefined): string | undefined {
  if (type === undefined || type === current.type || !isChannelType(current.type)) return undefined;
  return current.baseUrl === CHANNEL_TYPES[current.type].defaultBaseUrl ? '' : undefined;
}

export async function removeChannels(deps: AccountDeps, ids: number[]): Promise<number> {
  const deleted = await deleteChannels(deps.prisma, ids);
  if (deleted > 0) await publishInvalidation(deps, { kind: 'channels' });
  return deleted;
}

export async function removeChannel(deps: AccountDeps, id: number): Promise<void> {
  if ((await removeChannels(deps, [id])) === 0) throw new AppError('not_found', 'channel not found');
}

/** docs/api.md 3.3 channel test: one real minimal request; its time is recorded on the channel. */
export async function runChannelTest(deps: AccountDeps, id: number, requestedModel: string | undefined) {
  const channel = await requireChannel(deps, id);
  const type = channel.type;
  if (!isChannelType(type)) throw new AppError('invalid_request', `type: channel type ${type} cannot be tested`, { param: 'type' });
  const model = requestedModel || channel.models.split(',').map((m) => m.trim()).find(Boolean);
  if (!model) throw new AppError('invalid_request', 'model: the channel lists no model to test', { param: 'model' });
  const result = await testThroughRelay({ relayUrl: deps.env.RELAY_URL, token: internalApiToken(deps.env.CRYPTO_SECRET) }, { channel_id: id, model });
  await recordTestResult(deps.prisma, id, result.time_ms, new Date(nowMs(deps)));
  return result;
}
