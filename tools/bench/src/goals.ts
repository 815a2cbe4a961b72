import type { Settings } from './cli';
import type { Check } from './ledger-check';
import type { RssReading, RunResult } from './report';
import { formatNumber } from './stats';

/** The targets, each met or missed, judged on the last run (RSS growth across runs). */
export function goalChecks(runs: RunResult[], settings: Settings): Check[] {
  const last = runs.at(-1);
  if (!last) return [];
  const edge = last.targets.find((t) => t.target === 'edge');
  const direct = last.targets.find((t) => t.target === 'upstream');
  const checks: Check[] = [];
  if (edge?.concurrent) {
    const { requestsPerSecond, errors } = edge.concurrent;
    checks.push({
      ok: requestsPerSecond >= 2500 && errors === 0,
      line: `edge at ${settings.connections} connections: ${formatNumber(requestsPerSecond, 0)} req/s (>= 2500), ${errors} errors (0)`,
    });
  }
  if (edge?.single && direct?.single) {
    const p50 = edge.single.latency.p50 - direct.single.latency.p50;
    const p99 = edge.single.latency.p99 - direct.single.latency.p99;
    checks.push({ ok: p50 <= 1.5 && edge.single.errors === 0, line: `edge at 1 connection: +${formatNumber(p50)} ms at the median (<= 1.5)` });
    checks.push({ ok: p99 <= 5, line: `edge at 1 connection: +${formatNumber(p99)} ms at p99 (<= 5)` });
  }
  if (edge?.streams && direct?.streams) {
    const firstByte = edge.streams.firstByte.p50 - direct.streams.firstByte.p50;
    checks.push({ ok: firstByte <= 3, line: `edge, ${settings.streams} concurrent streams: first byte +${formatNumber(firstByte)} ms at the median (<= 3)` });
    checks.push({ ok: edge.streams.errors === 0, line: `edge, ${settings.streams} concurrent streams: ${edge.streams.errors} errors in ${edge.streams.streams}` });
    // Merging beyond what the same load causes on direct streams means a chunk waited for the next.
    const heldBack = edge.streams.merged - direct.streams.merged;
    checks.push({
      ok: heldBack <= Math.ceil(edge.streams.chunks * 0.01),
      line: `edge streams: ${edge.streams.merged} chunks merged with the previous one vs ${direct.streams.merged} direct (no chunk held back: <= 1% more)`,
    });
  }
  if (edge?.streamBurst && direct?.streamBurst) {
    const burst = edge.streamBurst.firstByte.p50 - direct.streamBurst.firstByte.p50;
    checks.push({ ok: burst <= 3, line: `edge, ${settings.streams} streams requested at once: first byte +${formatNumber(burst)} ms at the median (<= 3)` });
  }
  const services = last.rss.filter((r): r is RssReading & { mb: number } => r.name !== 'fake upstream' && r.mb !== undefined);
  if (services.length > 0) {
    const largest = services.reduce((a, b) => (b.mb > a.mb ? b : a));
    checks.push({ ok: largest.mb < 150, line: `largest service RSS after the run: ${largest.name} ${formatNumber(largest.mb, 1)} MB (< 150)` });
  }
  // The first run includes start-up growth (JIT, pools, caches): growth is judged from run 2 on.
  const second = runs[1];
  if (second && runs.length >= 3 && services.length > 0) {
    const grown = services.map((reading) => ({
      name: reading.name,
      delta: reading.mb - (second.rss.find((r) => r.name === reading.name)?.mb ?? reading.mb),
    }));
    const worst = grown.reduce((a, b) => (b.delta > a.delta ? b : a));
    checks.push({ ok: worst.delta <= 10, line: `RSS growth from run 2 to run ${runs.length}: at most ${formatNumber(worst.delta, 1)} MB (${worst.name}; <= 10)` });
  }
  return checks;
}
