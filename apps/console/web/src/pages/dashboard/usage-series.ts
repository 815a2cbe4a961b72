import type { UsageItem } from '@modelgate/schemas/api';
import { formatInteger, quotaToUsd } from '../../lib/money';

const DAY_SECONDS = 86_400;

/** The dashboard's ranges: the current UTC day and the days before it. */
export const USAGE_RANGES = [7, 30] as const;
export type UsageRangeDays = (typeof USAGE_RANGES)[number];

/** Models charted on their own in "Spend by model"; the rest are summed as one series. */
export const MAX_MODEL_SERIES = 5;
export const OTHER_MODELS_LABEL = 'Other models';

/** One UTC day of the chosen range; a day without calls has zeros. */
export interface UsageDay {
  /** Unix seconds: the start of the UTC day. */
  bucket: number;
  /** e.g. "Nov 25" */
  label: string;
  requests: number;
  quota: number;
  usd: number;
  /** USD per model series, in the order of `UsageSummary.series`. */
  seriesUsd: number[];
}

export interface ModelUsage {
  modelName: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  quota: number;
}

export interface UsageSummary {
  days: UsageDay[];
  /** Every model of the range, the most spent on first. */
  models: ModelUsage[];
  /** Labels of the stacked series: the top models, then OTHER_MODELS_LABEL when there are more. */
  series: string[];
  requests: number;
  quota: number;
}

/** The query of GET /api/data/self for the last `days` UTC days, today included. */
export function usageRangeQuery(days: UsageRangeDays, now: number) {
  return { granularity: 'day' as const, start_timestamp: now - (days - 1) * DAY_SECONDS, end_timestamp: now };
}

const dayLabelFormat = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** A UTC day's start as "Nov 25" (the report's buckets are UTC days). */
export function dayLabel(bucket: number): string {
  return dayLabelFormat.format(new Date(bucket * 1000));
}

/**
 * The report of GET /api/data/self (granularity day) as one row per day of its range, days without
 * calls included, with totals per model; `start` and `end` are the report's widened range.
 */
export function summarizeUsage(report: { start_timestamp: number; end_timestamp: number; items: readonly UsageItem[] }, quotaPerUnit: number): UsageSummary {
  const byModel = new Map<string, ModelUsage>();
  for (const item of report.items) {
    const model = byModel.get(item.model_name) ?? { modelName: item.model_name, requests: 0, promptTokens: 0, completionTokens: 0, quota: 0 };
    model.requests += item.requests;
    model.promptTokens += item.prompt_tokens;
    model.completionTokens += item.completion_tokens;
    model.quota += item.quota;
    byModel.set(item.model_name, model);
  }
  const models = [...byModel.values()].sort((a, b) => b.quota - a.quota || b.requests - a.requests || a.modelName.localeCompare(b.modelName));
  const charted = models.slice(0, MAX_MODEL_SERIES).map((model) => model.modelName);
  const series = models.length > MAX_MODEL_SERIES ? [...charted, OTHER_MODELS_LABEL] : charted;
  const seriesIndex = (modelName: string) => {
    const index = charted.indexOf(modelName);
    return index >= 0 ? index : charted.length;
  };

  const firstDay = report.start_timestamp - (report.start_timestamp % DAY_SECONDS);
  const days: UsageDay[] = [];
  for (let bucket = firstDay; bucket <= report.end_timestamp; bucket += DAY_SECONDS) {
    days.push({ bucket, label: dayLabel(bucket), requests: 0, quota: 0, usd: 0, seriesUsd: series.map(() => 0) });
  }
  for (const item of report.items) {
    const day = days[Math.floor((item.bucket - firstDay) / DAY_SECONDS)];
    if (!day) continue;
    const usd = quotaToUsd(item.quota, quotaPerUnit);
    day.requests += item.requests;
    day.quota += item.quota;
    day.usd += usd;
    const index = seriesIndex(item.model_name);
    day.seriesUsd[index] = (day.seriesUsd[index] ?? 0) + usd;
  }
  return {
    days,
    models,
    series,
    requests: models.reduce((sum, model) => sum + model.requests, 0),
    quota: models.reduce((sum, model) => sum + model.quota, 0),
  };
}

/** "1 request", "2,500 requests": a count and its noun, plural unless the count is 1. */
export function formatCount(count: number, noun: string): string {
  return `${formatInteger(count)} ${count === 1 ? noun : `${noun}s`}`;
}

/** The day with the highest `value` (the first of equals), or undefined when every day is 0. */
export function busiestDay(days: readonly UsageDay[], value: (day: UsageDay) => number): UsageDay | undefined {
  let busiest: UsageDay | undefined;
  for (const day of days) if (value(day) > 0 && (!busiest || value(day) > value(busiest))) busiest = day;
  return busiest;
}
