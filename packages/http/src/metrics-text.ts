/** One sample of a Prometheus text exposition. */
export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The samples of one series name in a Prometheus text exposition (what `/metrics` answers). */
export function metricSamples(exposition: string, name: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const close = line.lastIndexOf('}');
    const labelText = line[name.length] === '{' ? line.slice(name.length + 1, close) : '';
    const labels = Object.fromEntries([...labelText.matchAll(LABEL)].map(([, key, value]) => [key, value]));
    samples.push({ labels, value: Number(line.slice((close === -1 ? name.length : close + 1)).trim()) });
  }
  return samples;
}

/**
 * The value of the sample of `name` whose labels include `labels` (label order does not matter),
 * or undefined when there is none.
 */
export function metricValue(exposition: string, name: string, labels: Record<string, string | number> = {}): number | undefined {
  const wanted = Object.entries(labels);
  return metricSamples(exposition, name).find((sample) => wanted.every(([key, value]) => sample.labels[key] === String(value)))?.value;
}
