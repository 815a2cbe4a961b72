import { formatInteger } from '../../lib/money';
import { PRICE_UNIT_LABELS, type PriceUnit } from '../../lib/prices';

const plural = (count: number, one: string, many: string) => `${formatInteger(count)} ${count === 1 ? one : many}`;

function numberIn(other: Readonly<Record<string, unknown>>, key: string): number | undefined {
  const value = other[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function unitIn(other: Readonly<Record<string, unknown>>): PriceUnit | undefined {
  const unit = other.unit;
  return typeof unit === 'string' && Object.hasOwn(PRICE_UNIT_LABELS, unit) ? (unit as PriceUnit) : undefined;
}

/**
 * What a media call's log row says was billed (docs/api.md 2.14, its `other`): "2 images",
 * "1,234 characters", "61 s", "1 request", and "× USD 0.04 per image" when it was priced per unit;
 * images that counted more units than there were (high quality, large sizes) say so. Undefined for
 * rows of other calls.
 */
export function mediaBilledText(other: Readonly<Record<string, unknown>>): string | undefined {
  const images = numberIn(other, 'images');
  const characters = numberIn(other, 'characters');
  const seconds = numberIn(other, 'seconds');
  const requests = numberIn(other, 'requests');
  const quantities = [
    images === undefined ? '' : plural(images, 'image', 'images'),
    characters === undefined ? '' : plural(characters, 'character', 'characters'),
    seconds === undefined ? '' : `${formatInteger(seconds)} s`,
    requests === undefined ? '' : plural(requests, 'request', 'requests'),
  ].filter(Boolean);
  if (quantities.length === 0) return undefined;
  const billed = quantities.join(', ');
  const unit = unitIn(other);
  const units = numberIn(other, 'units');
  const usd = numberIn(other, 'usd_per_unit');
  if (unit === undefined || usd === undefined) return billed;
  const counted = unit === 'image' && units !== undefined && units !== images ? ` = ${formatInteger(units)} units` : '';
  return `${billed}${counted} × USD ${usd} per ${PRICE_UNIT_LABELS[unit]}`;
}
