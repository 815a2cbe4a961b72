import { formatDelta, formatNumber, percentile, Samples, summarize } from '../src/stats';

describe('benchmark statistics', () => {
  it('interpolates percentiles between ranks', () => {
    const sorted = [1, 2, 3, 4];
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 50)).toBe(2.5);
    expect(percentile(sorted, 100)).toBe(4);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarises unsorted samples, keeping sub-millisecond resolution', () => {
    const samples = new Samples();
    for (const value of [0.9, 0.3, 0.5, 0.7, 0.1]) samples.push(value);
    const summary = summarize(samples.toArray());
    expect(summary.count).toBe(5);
    expect(summary.p50).toBeCloseTo(0.5);
    expect(summary.max).toBeCloseTo(0.9);
    expect(summary.mean).toBeCloseTo(0.5);
  });

  it('keeps every sample when the buffer grows', () => {
    const samples = new Samples();
    for (let i = 0; i < 5000; i++) samples.push(i);
    expect(samples.length).toBe(5000);
    expect(summarize(samples.toArray()).p99).toBeCloseTo(4949.01);
  });

  it('formats table cells', () => {
    expect(formatNumber(1.234)).toBe('1.23');
    expect(formatNumber(Number.NaN)).toBe('n/a');
    expect(formatDelta(0.42)).toBe('+0.42');
    expect(formatDelta(-0.1)).toBe('-0.10');
    expect(formatDelta(-0.001)).toBe('-0.00');
  });
});
