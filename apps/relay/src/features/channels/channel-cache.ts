import { decryptSecret } from '@modelgate/db';
import { AppError } from '@modelgate/errors';
import type { Logger } from '@modelgate/logger';
import {
  CHANNEL_STATUS,
  CHANNEL_TYPES,
  channelBaseUrl,
  type ChannelSettings,
  type ChannelType,
  checkChannelSettings,
  isChannelType,
  parseModelMapping,
  type Dialect,
  type RelaySurface,
} from '@modelgate/schemas';
import type { Provider, UpstreamTarget } from '../../core/provider';
import type { ChannelRepository, ChannelRow } from './repository';

export interface ChannelRecord extends UpstreamTarget {
  name: string;
  type: ChannelType;
  /** The wire dialect of its upstream (docs/api.md 2.6). */
  dialect: Dialect;
  /** What talks to its upstream. */
  provider: Provider;
  priority: number;
  weight: number;
  modelMapping: ReadonlyMap<string, string>;
  status: number;
  autoBan: boolean;
  models: string[];
  groups: string[];
}

/** What the metrics show of a channel. */
export type ChannelState = Pick<ChannelRecord, 'id' | 'dialect' | 'status'>;

interface Route {
  /** Enabled channels by priority, highest first. Empty: channels exist but all are disabled. */
  tiers: ChannelRecord[][];
}

function splitList(text: string): string[] {
  return [...new Set(text.split(',').map((s) => s.trim()).filter(Boolean))];
}

/** Checked by the account service on write; settings that do not suit the type (written by hand) count as none. */
function settingsOf(type: ChannelType, stored: unknown): ChannelSettings {
  const checked = checkChannelSettings(type, stored);
  return checked.ok ? checked.settings : {};
}

/** The account service validates `model_mapping` on write; an unreadable one (written by hand) maps nothing. */
function mappingOf(text: string): Map<string, string> {
  try {
    return parseModelMapping(text);
  } catch {
    return new Map();
  }
}

/**
 * A channel row as the relay uses it, or why it cannot be used: a type this relay has no provider
 * for (an account service newer than the relay, mid-upgrade), an unreadable key or base URL.
 */
export function channelRecordOf(
  row: ChannelRow,
  cryptoSecret: string,
  providerOf: (type: ChannelType) => Provider | undefined,
): ChannelRecord | string {
  const provider = isChannelType(row.type) ? providerOf(row.type) : undefined;
  if (!isChannelType(row.type) || !provider) return 'this relay has no provider for its type';
  const settings = settingsOf(row.type, row.settings);
  let key: string;
  let url: URL;
  try {
    key = decryptSecret(row.keyEnc, cryptoSecret);
    // '' means the type's default base URL.
    url = new URL(channelBaseUrl({ type: row.type, baseUrl: row.baseUrl, settings }));
  } catch (err) {
    return `unreadable key or base URL: ${(err as Error).message}`;
  }
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    dialect: CHANNEL_TYPES[row.type].dialect,
    provider,
    key,
    origin: url.origin,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
    priority: row.priority,
    weight: row.weight,
    modelMapping: mappingOf(row.modelMapping),
    status: row.status,
    autoBan: row.autoBan,
    models: splitList(row.models),
    groups: splitList(row.groups || 'default'),
    settings,
  };
}

/** What a model listing says (docs/api.md 2.2). */
export interface ModelListing {
  /** The dialects of the channel types serving it (OpenAI's `owned_by`). */
  dialects: Set<Dialect>;
  /** The surfaces it can be called on (Gemini's list shows only models served by generateContent). */
  surfaces: Set<RelaySurface>;
}

/** The surfaces a channel serves one of its models on (the provider may narrow them per model). */
function surfacesOf(channel: ChannelRecord, model: string): readonly RelaySurface[] {
  const upstreamModel = channel.modelMapping.get(model) ?? model;
  return channel.provider.surfacesFor?.(channel, upstreamModel) ?? channel.provider.facts.surfaces;
}

function routeKey(surface: RelaySurface, group: string, model: string): string {
  return `${surface}\u0000${group}\u0000${model}`;
}

/** The channels one request may try, in routing order (docs/api.md 2.4). */
export class ChannelPlan {
  private readonly tried = new Set<number>();

  constructor(
    private readonly tiers: ChannelRecord[][],
    private readonly coolingUntil: ReadonlyMap<number, number>,
  ) {}

  /**
   * The next channel: highest tier first, by weight, skipping channels already tried and those
   * cooling down. Cooling channels are the last resort rather than an outage.
   */
  next(): ChannelRecord | undefined {
    const now = Date.now();
    for (const tier of this.tiers) {
      const ready = tier.filter((c) => this.usable(c) && (this.coolingUntil.get(c.id) ?? 0) <= now);
      const picked = pickByWeight(ready);
      if (picked) return this.take(picked);
    }
    let soonest: ChannelRecord | undefined;
    for (const tier of this.tiers) {
      for (const channel of tier) {
        if (!this.usable(channel)) continue;
        if (!soonest || (this.coolingUntil.get(channel.id) ?? 0) < (this.coolingUntil.get(soonest.id) ?? 0)) soonest = channel;
      }
    }
    return soonest ? this.take(soonest) : undefined;
  }

  /**
   * The channel may be tried once more (its cached credential was refused and dropped): the next
   * `next()` prefers it, as it stays the best choice of its tier.
   */
  again(channel: ChannelRecord): void {
    this.tried.delete(channel.id);
  }

  private usable(channel: ChannelRecord): boolean {
    return !this.tried.has(channel.id) && channel.status === CHANNEL_STATUS.enabled;
  }

  private take(channel: ChannelRecord): ChannelRecord {
    this.tried.add(channel.id);
    return channel;
  }
}

/** Undefined only for an empty list. */
function pickByWeight(channels: ChannelRecord[]): ChannelRecord | undefined {
  if (channels.length === 1) return channels[0];
  const total = channels.reduce((sum, c) => sum + Math.max(0, c.weight), 0);
  if (total === 0) return channels[Math.floor(Math.random() * channels.length)];
  let point = Math.random() * total;
  for (const channel of channels) {
    point -= Math.max(0, channel.weight);
    if (point < 0) return channel;
  }
  return channels.at(-1);
}

/**
 * Every channel in memory, indexed by (surface, group, model). Reloaded whole on a `channels`
 * invalidation; cool-downs are per relay instance and survive reloads.
 */
export class ChannelCache {
  private channels: ChannelRecord[] = [];
  private routes = new Map<string, Route>();
  private readonly coolingUntil = new Map<number, number>();

  constructor(
    private readonly repository: ChannelRepository,
    private readonly cryptoSecret: string,
    private readonly cooldownMs: number,
    private readonly logger: Logger,
    /** The registry: the provider of a channel type, undefined for a type this relay does not know. */
    private readonly providerOf: (type: ChannelType) => Provider | undefined,
    /** Told the loaded channels' ids after each reload (providers forget the others' credentials). */
    private readonly onReload: (loaded: ReadonlySet<number>) => void = () => undefined,
  ) {}

  async reload(): Promise<void> {
    const rows = await this.repository.findAll();
    this.channels = rows.map((row) => this.toRecord(row)).filter((c): c is ChannelRecord => c !== null);
    this.onReload(new Set(this.channels.map((channel) => channel.id)));
    this.rebuild();
  }

  private toRecord(row: ChannelRow): ChannelRecord | null {
    const record = channelRecordOf(row, this.cryptoSecret, this.providerOf);
    if (typeof record !== 'string') return record;
    this.logger.warn({ channelId: row.id, type: row.type, reason: record }, 'channel skipped');
    return null;
  }

  private rebuild(): void {
    const byRoute = new Map<string, ChannelRecord[]>();
    for (const channel of this.channels) {
      for (const group of channel.groups) {
        for (const model of channel.models) {
          for (const surface of surfacesOf(channel, model)) {
            const key = routeKey(surface, group, model);
            const list = byRoute.get(key);
            if (list) list.push(channel);
            else byRoute.set(key, [channel]);
          }
        }
      }
    }
    const routes = new Map<string, Route>();
    for (const [key, list] of byRoute) {
      const enabled = list.filter((c) => c.status === CHANNEL_STATUS.enabled);
      const priorities = [...new Set(enabled.map((c) => c.priority))].sort((a, b) => b - a);
      routes.set(key, { tiers: priorities.map((p) => enabled.filter((c) => c.priority === p)) });
    }
    this.routes = routes;
    const ids = new Set(this.channels.map((c) => c.id));
    for (const id of this.coolingUntil.keys()) if (!ids.has(id)) this.coolingUntil.delete(id);
  }

  /**
   * Channels for one call, of every type that can answer the surface (docs/api.md 2.4, 2.6): 404 when
   * none serves the model for the group, 503 when none is enabled.
   */
  plan(surface: RelaySurface, group: string, model: string): ChannelPlan {
    const route = this.routes.get(routeKey(surface, group, model));
    if (!route) throw new AppError('model_not_found', `no channel serves model ${model} for group ${group}`);
    if (route.tiers.length === 0) {
      throw new AppError('no_available_channel', `no channel is available for model ${model} right now`);
    }
    return new ChannelPlan(route.tiers, this.coolingUntil);
  }

  /** A transient failure (reset, 429, 5xx): other channels go first for a while. */
  coolDown(channelId: number): void {
    this.coolingUntil.set(channelId, Date.now() + this.cooldownMs);
  }

  /** Takes an automatically disabled channel out of routing at once, before the reload confirms it. */
  markDisabled(channelId: number): void {
    const channel = this.channels.find((c) => c.id === channelId);
    if (!channel) return;
    channel.status = CHANNEL_STATUS.autoDisabled;
    this.rebuild();
  }

  /** Every loaded channel (readable key and base URL), whatever its status. */
  states(): readonly ChannelState[] {
    return this.channels;
  }

  /** Models of the group's enabled channels, each with the dialects of the types and the surfaces that serve it. */
  modelsFor(group: string): Map<string, ModelListing> {
    const models = new Map<string, ModelListing>();
    for (const channel of this.channels) {
      if (channel.status !== CHANNEL_STATUS.enabled || !channel.groups.includes(group)) continue;
      for (const model of channel.models) {
        let listing = models.get(model);
        if (!listing) {
          listing = { dialects: new Set(), surfaces: new Set() };
          models.set(model, listing);
        }
        listing.dialects.add(channel.dialect);
        for (const surface of surfacesOf(channel, model)) listing.surfaces.add(surface);
      }
    }
    return models;
  }
}
