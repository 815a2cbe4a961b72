import type { MediaBilled, PriceUnit } from './pricing';

/**
 * A consume row's `other` (docs/api.md 2.11, 2.14) as the relay stores it: lean, since every byte of
 * a log row is written once per call (WAL included). Token counts of 0 are left out, and so is the
 * cache ratio of tokens the call did not have; `consumeOtherView` gives the reader every key.
 */
export interface StoredConsumeOther extends MediaBilled {
  /** The settlement's id (crash recovery), never shown. */
  entry: string;
  group: string;
  model_ratio: number;
  completion_ratio: number;
  group_ratio: number;
  cache_tokens?: number;
  cache_creation_tokens?: number;
  reasoning_tokens?: number;
  cache_ratio?: number;
  cache_creation_ratio?: number;
  tier_above_prompt_tokens?: number;
  server_tools?: Record<string, { count: number; usd_each: number; quota: number }>;
}

/** What a reader of a consume row finds under `other` when the row left a count or ratio out. */
const CONSUME_OTHER_DEFAULTS = { cache_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0, cache_ratio: 1, cache_creation_ratio: 1 } as const;

/** A consume row's `other` with the counts and ratios it left out (0 tokens, ratio 1: nothing charged by them). */
export function consumeOtherView(other: Record<string, unknown>): Record<string, unknown> {
  return { ...CONSUME_OTHER_DEFAULTS, ...other };
}

/** How a consume row names a price unit (docs/api.md 2.14). */
const UNIT_NAMES: Readonly<Record<PriceUnit, string>> = { image: 'image', '1k_characters': '1,000 characters', minute: 'minute', request: 'request' };

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/**
 * A consume row's `content` (docs/api.md 3.2), written from its `other` when read rather than
 * stored twice: the prices the charge was computed with, units at a unit price or the ratios (the
 * cache ones only when such tokens were charged), the long-context tier and the server tools.
 */
export function consumeContentOf(other: Record<string, unknown>): string {
  const groupRatio = numberOf(other.group_ratio) ?? 1;
  const unit = other.unit as PriceUnit | undefined;
  if (unit !== undefined && UNIT_NAMES[unit] !== undefined) {
    return `${numberOf(other.units) ?? 0} x USD ${numberOf(other.usd_per_unit) ?? 0} per ${UNIT_NAMES[unit]}, group ratio ${groupRatio}`;
  }
  const ratios = [`model ratio ${numberOf(other.model_ratio) ?? 1}`, `completion ratio ${numberOf(other.completion_ratio) ?? 1}`, `group ratio ${groupRatio}`];
  if ((numberOf(other.cache_tokens) ?? 0) > 0) ratios.push(`cache ratio ${numberOf(other.cache_ratio) ?? 1}`);
  if ((numberOf(other.cache_creation_tokens) ?? 0) > 0) ratios.push(`cache creation ratio ${numberOf(other.cache_creation_ratio) ?? 1}`);
  const tier = numberOf(other.tier_above_prompt_tokens);
  if (tier !== undefined) ratios.push(`long-context tier above ${tier} prompt tokens`);
  const tools = other.server_tools;
  if (tools !== null && typeof tools === 'object') {
    for (const [tool, charge] of Object.entries(tools as Record<string, { count?: unknown; usd_each?: unknown; quota?: unknown }>)) {
      ratios.push(`${tool} ${numberOf(charge.count) ?? 0} x USD ${numberOf(charge.usd_each) ?? 0} = ${numberOf(charge.quota) ?? 0}`);
    }
  }
  return ratios.join(', ');
}
