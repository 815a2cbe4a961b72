import type { UsageItem } from '@modelgate/schemas/api';
import { busiestDay, dayLabel, formatCount, MAX_MODEL_SERIES, OTHER_MODELS_LABEL, summarizeUsage, usageRangeQuery } from '../web/src/pages/dashboard/usage-series';

const DAY = 86_400;
const QUOTA_PER_UNIT = 500_000;
/** 2026-11-19 00:00:00 UTC */
const FIRST_DAY = 1_795_046_400;

function item(day: number, modelName: string, quota: number, requests = 1): UsageItem {
  return { bucket: FIRST_DAY + day * DAY, model_name: modelName, requests, prompt_tokens: 10 * requests, completion_tokens: 5 * requests, quota };
}

function report(items: UsageItem[], days = 7) {
  return { start_timestamp: FIRST_DAY, end_timestamp: FIRST_DAY + days * DAY - 1, items };
}

describe('usageRangeQuery', () => {
  it('asks for daily buckets from the day (days - 1) before now to now', () => {
    const now = FIRST_DAY + 6 * DAY + 3600;
    expect(usageRangeQuery(7, now)).toEqual({ granularity: 'day', start_timestamp: FIRST_DAY + 3600, end_timestamp: now });
    expect(usageRangeQuery(30, now).start_timestamp).toBe(now - 29 * DAY);
  });
});

describe('summarizeUsage', () => {
  it('has one row per day of the range, days without calls at zero', () => {
    const summary = summarizeUsage(report([item(2, 'gpt-4o-mini', 250_000, 3)]), QUOTA_PER_UNIT);
    expect(summary.days).toHaveLength(7);
    expect(summary.days.map((day) => day.requests)).toEqual([0, 0, 3, 0, 0, 0, 0]);
    expect(summary.days[2]).toMatchObject({ bucket: FIRST_DAY + 2 * DAY, label: 'Nov 21', quota: 250_000, usd: 0.5, seriesUsd: [0.5] });
    expect(summary.days[0]).toMatchObject({ label: 'Nov 19', usd: 0, seriesUsd: [0] });
    expect(summary).toMatchObject({ requests: 3, quota: 250_000, series: ['gpt-4o-mini'] });
  });

  it('starts at the UTC day holding start_timestamp even when the range is not aligned', () => {
    const summary = summarizeUsage({ start_timestamp: FIRST_DAY + 5000, end_timestamp: FIRST_DAY + DAY + 10, items: [item(1, 'm', 100)] }, QUOTA_PER_UNIT);
    expect(summary.days.map((day) => day.bucket)).toEqual([FIRST_DAY, FIRST_DAY + DAY]);
    expect(summary.days[1]?.quota).toBe(100);
  });

  it('sums each model over the range, the most spent on first', () => {
    const summary = summarizeUsage(report([item(0, 'cheap', 100, 5), item(0, 'dear', 900), item(3, 'cheap', 100, 2), item(4, 'dear', 900)]), QUOTA_PER_UNIT);
    expect(summary.models).toEqual([
      { modelName: 'dear', requests: 2, promptTokens: 20, completionTokens: 10, quota: 1800 },
      { modelName: 'cheap', requests: 7, promptTokens: 70, completionTokens: 35, quota: 200 },
    ]);
    expect(summary.series).toEqual(['dear', 'cheap']);
    expect(summary.days[0]?.seriesUsd).toEqual([900 / QUOTA_PER_UNIT, 100 / QUOTA_PER_UNIT]);
  });

  it('charts the top models on their own and sums the rest as other models', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const items = names.map((name, index) => item(1, name, (names.length - index) * 1000));
    const summary = summarizeUsage(report(items), QUOTA_PER_UNIT);
    expect(summary.series).toEqual([...names.slice(0, MAX_MODEL_SERIES), OTHER_MODELS_LABEL]);
    expect(summary.days[1]?.seriesUsd.at(-1)).toBeCloseTo((2000 + 1000) / QUOTA_PER_UNIT);
    expect(summary.days[1]?.usd).toBeCloseTo(28_000 / QUOTA_PER_UNIT);
  });

  it('ignores an item outside the range instead of adding a day for it', () => {
    const summary = summarizeUsage(report([item(9, 'm', 100)]), QUOTA_PER_UNIT);
    expect(summary.days).toHaveLength(7);
    expect(summary.days.every((day) => day.quota === 0)).toBe(true);
  });
});

describe('busiestDay', () => {
  it('is the first day with the highest value, none when all are zero', () => {
    const { days } = summarizeUsage(report([item(1, 'm', 100), item(4, 'm', 300), item(5, 'm', 300)]), QUOTA_PER_UNIT);
    expect(busiestDay(days, (day) => day.quota)?.label).toBe(dayLabel(FIRST_DAY + 4 * DAY));
    expect(busiestDay(summarizeUsage(report([]), QUOTA_PER_UNIT).days, (day) => day.requests)).toBeUndefined();
  });
});

describe('formatCount', () => {
  it('puts the noun in the plural unless the count is 1', () => {
    expect(formatCount(1, 'request')).toBe('1 request');
    expect(formatCount(0, 'log row')).toBe('0 log rows');
    expect(formatCount(2500, 'request')).toBe('2,500 requests');
  });
});
