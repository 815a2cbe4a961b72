/** Latency (or any sample) distribution, in the unit of the samples. */
export interface Summary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The p-th percentile (0..100) of ascending samples, interpolated between the two nearest ranks. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const rank = (Math.min(Math.max(p, 0), 100) / 100) * (sorted.length - 1);
  const lower = sorted[Math.floor(rank)];
  const upper = sorted[Math.ceil(rank)];
  // Only an empty sample has no rank.
  if (lower === undefined || upper === undefined) return Number.NaN;
  return lower + (upper - lower) * (rank - Math.floor(rank));
}

export function summarize(samples: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(samples).sort();
  let total = 0;
  for (const value of sorted) total += value;
  return {
    count: sorted.length,
    mean: sorted.length === 0 ? Number.NaN : total / sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Growable float samples: a 10 s run at several thousand requests/s stays one typed array. */
export class Samples {
  private values = new Float64Array(1024);
  private size = 0;

  push(value: number): void {
    if (this.size === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.size++] = value;
  }

  get length(): number {
    return this.size;
  }

  toArray(): Float64Array {
    return this.values.subarray(0, this.size);
  }
}

/** A number for the table: `digits` decimals, "n/a" when unknown. */
export function formatNumber(value: number | undefined, digits = 2): string {
  return value === undefined || Number.isNaN(value) ? 'n/a' : value.toFixed(digits);
}

/** A difference for the table, with its sign ("+0.42", "-0.10"). */
export function formatDelta(value: number | undefined, digits = 2): string {
  if (value === undefined || Number.isNaN(value)) return 'n/a';
  const text = value.toFixed(digits);
  return value >= 0 && !text.startsWith('-') ? `+${text}` : text;
}
