/**
 * Quota is the gateway's integer money unit: `quota_per_unit` of it (GET /api/status, option
 * QuotaPerUnit, 500000 by default) make USD 1.
 */
export function quotaToUsd(quota: number, quotaPerUnit: number): number {
  return quota / quotaPerUnit;
}

/** USD as quota, rounded to the nearest unit (quota is never fractional). */
export function usdToQuota(usd: number, quotaPerUnit: number): number {
  return Math.round(usd * quotaPerUnit);
}

const usdFormats = new Map<number, Intl.NumberFormat>();

function usdFormat(maximumFractionDigits: number): Intl.NumberFormat {
  let format = usdFormats.get(maximumFractionDigits);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits });
    usdFormats.set(maximumFractionDigits, format);
  }
  return format;
}

/**
 * A USD amount for people: cents for ordinary amounts, more digits for small ones so that one
 * call's cost (often a fraction of a cent) never shows as $0.00; never more than 6 decimals.
 */
export function formatUsd(usd: number): string {
  const size = Math.abs(usd);
  if (size === 0 || size >= 0.01) return usdFormat(2).format(usd);
  // Enough digits for two significant ones, e.g. $0.0012, $0.000034.
  const digits = Math.min(6, Math.max(2, 1 - Math.floor(Math.log10(size))));
  return usdFormat(digits).format(usd);
}

/** A price per 1M tokens: every digit it was set with (USD 0.125 stays $0.125), at least cents. */
export function formatUsdPrice(usd: number): string {
  return usdFormat(6).format(usd);
}

/** Quota shown as USD, e.g. 1_250_000 at 500000 per unit -> "$2.50". */
export function formatQuotaAsUsd(quota: number, quotaPerUnit: number): string {
  return formatUsd(quotaToUsd(quota, quotaPerUnit));
}

const integerFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** Whole numbers with thousands separators: quota, tokens, request counts. */
export function formatInteger(value: number): string {
  return integerFormat.format(value);
}

/**
 * The balance card's figure and the line under it. Below 0 it is a debt: usage beyond a call's
 * reservation is charged in full, and the gateway refuses calls until a top-up covers it.
 */
export function balanceFigures(quota: number, quotaPerUnit: number): { value: string; detail: string } {
  if (quota < 0) return { value: `Debt: ${formatQuotaAsUsd(-quota, quotaPerUnit)}`, detail: `${formatInteger(quota)} quota; top up to continue` };
  return { value: formatQuotaAsUsd(quota, quotaPerUnit), detail: `${formatInteger(quota)} quota` };
}
