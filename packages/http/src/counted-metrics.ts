import type { Histogram, Registry } from 'prom-client';

/**
 * Counters and histograms counted in plain numbers and handed to prom-client's registry only when
 * scraped. prom-client validates and hashes a child's labels on every call, even a bound child's;
 * here the caller binds a series once (`labels`) and keeps it, so counting is a few additions.
 * The registry prints them as it prints its own Counter and Histogram: the same lines, label sets in
 * the order first counted, default labels included.
 */

/** One label set: label name to value. */
export type LabelSet<L extends string> = Readonly<Record<L, string>>;

interface CountedConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** What both kinds share: series made once per label set, listed when first counted. */
abstract class CountedMetric<L extends string, S> {
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  /** Series counted since the last reset, in the order first counted (as prom-client lists them). */
  protected listed: S[] = [];
  private readonly labelNames: readonly L[];
  private readonly series = new Map<string, S>();

  constructor(config: CountedConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    // Not a prom-client class, but what its registry reads of one.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Histogram);
  }

  /** The series of one label set, made on first use. Bind it once and keep it: this lookup hashes. */
  labels(labels: LabelSet<L>): S {
    const key = JSON.stringify(this.labelNames.map((name) => labels[name]));
    let series = this.series.get(key);
    if (series === undefined) {
      // In label-name order, as prom-client's `labels(...values)` builds them.
      const ordered = Object.fromEntries(this.labelNames.map((name) => [name, labels[name]])) as LabelSet<L>;
      series = this.make(ordered, (first) => this.listed.push(first));
      this.series.set(key, series);
    }
    return series;
  }

  protected abstract make(labels: LabelSet<L>, onFirst: (series: S) => void): S;
}

/** One label set of a `CountedCounter`. */
export class CounterSeries<L extends string> {
  value = 0;
  listed = false;

  constructor(
    readonly labels: LabelSet<L>,
    private readonly onFirst: (series: CounterSeries<L>) => void,
  ) {}

  /** Adds `by` (1 by default; never negative). */
  inc(by = 1): void {
    if (!this.listed) {
      this.listed = true;
      this.onFirst(this);
    }
    this.value += by;
  }
}

export class CountedCounter<L extends string> extends CountedMetric<L, CounterSeries<L>> {
  readonly type = 'counter';

  protected make(labels: LabelSet<L>, onFirst: (series: CounterSeries<L>) => void): CounterSeries<L> {
    return new CounterSeries(labels, onFirst);
  }

  get() {
    const values = this.listed.map((series) => ({ labels: series.labels, value: series.value }));
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const series of this.listed) {
      series.value = 0;
      series.listed = false;
    }
    this.listed = [];
  }
}

/** One label set of a `CountedHistogram`. */
export class HistogramSeries<L extends string> {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); past the last bound only `count` has them. */
  readonly inBucket: number[];

  constructor(
    readonly labels: LabelSet<L>,
    private readonly bounds: readonly number[],
    private readonly onFirst: (series: HistogramSeries<L>) => void,
  ) {
    this.inBucket = bounds.map(() => 0);
  }

  observe(value: number): void {
    if (this.count === 0) this.onFirst(this);
    this.count += 1;
    this.sum += value;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) {
        this.inBucket[i]! += 1;
        return;
      }
    }
  }
}

export class CountedHistogram<L extends string> extends CountedMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(config: CountedConfig<L> & { buckets: readonly number[] }) {
    super(config);
    this.bounds = config.buckets;
  }

  protected make(labels: LabelSet<L>, onFirst: (series: HistogramSeries<L>) => void): HistogramSeries<L> {
    return new HistogramSeries(labels, this.bounds, onFirst);
  }

  /**
   * What the registry prints, shaped as a prom-client Histogram's: the series' labels are shared
   * labels, printed after `le` and the registry's default labels.
   */
  getForPromString() {
    const name = this.name;
    const values = this.listed.flatMap((series) => {
      const sharedLabels = series.labels;
      let cumulative = 0;
      const buckets = this.bounds.map((le, i) => {
        cumulative += series.inBucket[i]!;
        return { metricName: `${name}_bucket`, labels: { le }, sharedLabels, value: cumulative };
      });
      return [
        ...buckets,
        { metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels, value: series.count },
        { metricName: `${name}_sum`, labels: {}, sharedLabels, value: series.sum },
        { metricName: `${name}_count`, labels: {}, sharedLabels, value: series.count },
      ];
    });
    return { name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The same with each value's labels whole, as prom-client's `get` (read by `getMetricsAsJSON`). */
  get() {
    const metric = this.getForPromString();
    const values = metric.values.map(({ sharedLabels, labels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } }));
    return { ...metric, values };
  }

  reset(): void {
    for (const series of this.listed) {
      series.count = 0;
      series.sum = 0;
      series.inBucket.fill(0);
    }
    this.listed = [];
  }
}
