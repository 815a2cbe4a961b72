import type { Settings } from './cli';
import type { Check } from './ledger-check';
import type { CpuCost } from './process-stats';
import { TARGET_LABELS, type RssReading, type RunResult, type TargetResult } from './report';
import { CALL_KINDS, CALL_LABELS, CHAT_KINDS, CLOUD_KINDS } from './requests';
import { formatDelta, formatNumber } from './stats';

/**
 * Relay CPU per call of a kind at most this many times its CPU per call of the kind's baseline: the
 * completions call of the same shape for chat, the OpenAI pass-through chat for the cloud channels.
 */
export const CHAT_CPU_LIMIT = 1.15;

/** What a key's limits and budget may add to the relay's CPU per call, us (docs/api.md 3.9.3, 3.9.4). */
export const LIMITS_CPU_LIMIT_US = 20;

const relayCpuOf = (result: { cpuPerRequest?: CpuCost[] } | undefined): number | undefined =>
  result?.cpuPerRequest?.find((cost) => cost.name === 'relay')?.us;

/**
 * The relay's CPU per chat call (pass-through and translated), whole answers and streams,
 * against its CPU per completions call of the same shape; its CPU per whole answer through a cloud
 * channel (Bedrock's SigV4 and Converse, Vertex's access token) against its CPU per OpenAI
 * pass-through chat call; its CPU per OpenAI chat call with a key that has limits and a budget at
 * most 20 us above the same call with the plain key; and no chunk of any kind's stream at N connections
 * held back. CPU is judged on the relay target (nothing else in front of it), else on the edge target.
 */
export function chatGoalChecks(targets: TargetResult[], connections: number): Check[] {
  const find = (name: TargetResult['target']) => targets.find((t) => t.target === name);
  const direct = find('upstream');
  const gateway = find('relay') ?? find('edge');
  const streamed = find('edge') ?? find('relay');
  const checks: Check[] = [];
  const cpuCheck = (
    what: string,
    chat: { cpuPerRequest?: CpuCost[]; errors: number } | undefined,
    baseline: { cpuPerRequest?: CpuCost[] } | undefined,
    baselineWhat = 'completions call',
  ) => {
    const chatUs = relayCpuOf(chat);
    const baselineUs = relayCpuOf(baseline);
    if (!gateway || !chat || chatUs === undefined || baselineUs === undefined) return;
    const ratio = chatUs / baselineUs;
    checks.push({
      ok: ratio <= CHAT_CPU_LIMIT && chat.errors === 0,
      line:
        `relay CPU per ${what}, ${TARGET_LABELS[gateway.target]}: ${formatNumber(chatUs, 0)} us vs ${formatNumber(baselineUs, 0)} us per ${baselineWhat}, ` +
        `${formatNumber(ratio)}x (<= ${CHAT_CPU_LIMIT}x), ${chat.errors} errors`,
    });
  };
  for (const kind of CHAT_KINDS) {
    cpuCheck(`${CALL_LABELS[kind]} call at ${connections} connections`, gateway?.wholeLoad?.[kind], gateway?.concurrent);
    cpuCheck(`${CALL_LABELS[kind]} stream at ${connections} connections`, gateway?.streamLoad?.[kind], gateway?.streamLoad?.completions);
  }
  for (const kind of CLOUD_KINDS) {
    const baseline = 'chat-openai';
    cpuCheck(`${CALL_LABELS[kind]} call at ${connections} connections`, gateway?.wholeLoad?.[kind], gateway?.wholeLoad?.[baseline], `${CALL_LABELS[baseline]} call`);
  }
  const plain = gateway?.wholeLoad?.['chat-openai'];
  const limited = gateway?.wholeLoad?.['chat-limited'];
  const plainUs = relayCpuOf(plain);
  const limitedUs = relayCpuOf(limited);
  if (gateway && limited && plainUs !== undefined && limitedUs !== undefined) {
    const added = limitedUs - plainUs;
    checks.push({
      ok: added <= LIMITS_CPU_LIMIT_US && limited.errors === 0,
      line:
        `relay CPU per ${CALL_LABELS['chat-limited']} call at ${connections} connections, ${TARGET_LABELS[gateway.target]}: ${formatNumber(limitedUs, 0)} us ` +
        `vs ${formatNumber(plainUs, 0)} us with the plain key, ${formatDelta(added, 0)} us (<= ${LIMITS_CPU_LIMIT_US} us), ${limited.errors} errors`,
    });
  }
  for (const kind of CALL_KINDS) {
    const through = streamed?.streamLoad?.[kind];
    const baseline = direct?.streamLoad?.[kind];
    if (!streamed || !through || !baseline || through.chunks === 0 || baseline.chunks === 0) continue;
    // The closed loops complete different numbers of streams: merging is compared as a share of chunks.
    const excess = through.merged / through.chunks - baseline.merged / baseline.chunks;
    checks.push({
      ok: excess <= 0.01 && through.errors === 0,
      line:
        `${TARGET_LABELS[streamed.target]}, ${CALL_LABELS[kind]} streams: ${through.merged}/${through.chunks} chunks merged with the previous one ` +
        `vs ${baseline.merged}/${baseline.chunks} direct (no chunk held back: <= 1 point more), ${through.errors} errors in ${through.streams}`,
    });
  }
  return checks;
}

/** How far one large transcription upload may raise the relay's RSS, MB: it is spooled to disk, not held. */
export const UPLOAD_RSS_GROWTH_LIMIT_MB = 8;

/** The relay's RSS growth during the large transcription upload, on each target that sampled it, and the upload's success. */
export function uploadGoalChecks(targets: TargetResult[]): Check[] {
  return targets.flatMap(({ target, upload }) => {
    const relay = upload?.rssGrowth.find((reading) => reading.name === 'relay');
    if (!upload || !relay) return [];
    const { large } = upload;
    return [
      {
        ok: relay.mb <= UPLOAD_RSS_GROWTH_LIMIT_MB && large.ok === 1 && large.errors === 0,
        line:
          `relay RSS growth during one ${upload.largeMb} MB transcription upload, ${TARGET_LABELS[target]}: ` +
          `${formatDelta(relay.mb, 1)} MB (<= ${UPLOAD_RSS_GROWTH_LIMIT_MB}), ${large.errors} errors`,
      },
    ];
  });
}

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
  checks.push(...chatGoalChecks(last.targets, settings.connections));
  checks.push(...uploadGoalChecks(last.targets));
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
