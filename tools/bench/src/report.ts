import type { LoadResult } from './load';
import type { CpuCost } from './process-stats';
import { PEER_PROCESS } from './peer';
import { CALL_KINDS, CALL_LABELS, type CallKind, DIRECT_KINDS, MEDIA_MODELS } from './requests';
import { formatDelta, formatNumber } from './stats';
import type { StreamResult } from './streams';
import { UPLOAD_CONNECTIONS, uploadMbPerSecond, type UploadResult } from './uploads';

export const TARGETS = ['upstream', 'relay', 'edge', 'peer'] as const;
export type TargetName = (typeof TARGETS)[number];

export const TARGET_LABELS: Record<TargetName, string> = {
  upstream: 'fake upstream (direct)',
  relay: 'relay (direct)',
  edge: 'edge -> relay -> upstream',
  peer: 'peer gateway -> upstream',
};

export interface TargetResult {
  target: TargetName;
  single?: LoadResult;
  concurrent?: LoadResult;
  /** Concurrent streams in a steady state (arrivals spread over one stream's length). */
  streams?: StreamResult;
  /** The same number of streams requested at one instant. */
  streamBurst?: StreamResult;
  /** Whole answers of the other kinds at N connections (closed loop, in turns with `concurrent`), by kind. */
  wholeLoad?: Partial<Record<CallKind, LoadResult>>;
  /** Streams at N connections (closed loop: each connection opens the next when one ends), by kind. */
  streamLoad?: Partial<Record<CallKind, StreamResult>>;
  /** Transcription uploads: small ones at a few connections, one large one alone with the RSS growth. */
  upload?: UploadResult;
  /** Slow streams held open together, and the RSS each open stream added to each process it passes. */
  openStreams?: { result: StreamResult; memoryPerStream: { name: string; kb: number | undefined }[] };
}

export interface RssReading {
  name: string;
  mb: number | undefined;
}

export interface RunResult {
  run: number;
  targets: TargetResult[];
  rss: RssReading[];
}

export interface TableOptions {
  connections: number;
  streams: number;
  openStreams: number;
  openStreamMs: number;
  chunks: number;
  chunkDelayMs: number;
}

function errorsCell(errors: number, kinds: string[]): string {
  return errors === 0 ? '0' : `${errors} (${kinds.join(', ')})`;
}

/** Steal during the case, then the CPU per request or stream of each process ("relay 250, edge 100"). */
function costNote(result: { cpuPerRequest?: CpuCost[]; stealPercent?: number }, unit: string): string {
  const notes: string[] = [];
  if (result.stealPercent !== undefined) notes.push(`steal ${result.stealPercent.toFixed(0)}%`);
  if (result.cpuPerRequest && result.cpuPerRequest.length > 0) {
    notes.push(`CPU us/${unit}: ${result.cpuPerRequest.map((cost) => `${cost.name} ${cost.us.toFixed(0)}`).join(', ')}`);
  }
  return notes.join('; ');
}

const cpuOf = (result: { cpuPerRequest?: CpuCost[] }, name: string): number | undefined => result.cpuPerRequest?.find((cost) => cost.name === name)?.us;

/**
 * The headline: CPU per call of the whole gateway, edge + relay on the edge target (where a call
 * passes both), the peer's own process on the peer target (when its pid was given).
 */
export function gatewayCpuPerCall(target: TargetName, result: { cpuPerRequest?: CpuCost[] }): number | undefined {
  if (target === 'peer') return cpuOf(result, PEER_PROCESS);
  const edge = cpuOf(result, 'edge');
  const relay = cpuOf(result, 'relay');
  return target === 'edge' && edge !== undefined && relay !== undefined ? edge + relay : undefined;
}

const gatewayCpuCell = (target: TargetName, result: { cpuPerRequest?: CpuCost[] }) => {
  const us = gatewayCpuPerCall(target, result);
  return us === undefined ? '' : formatNumber(us, 0);
};

/** A load case; `note` comes first in its notes. */
function loadRow(run: number, label: string, target: TargetName, result: LoadResult, direct: LoadResult | undefined, note = ''): string[] {
  const isDirect = target === 'upstream' || direct === undefined;
  return [
    String(run),
    label,
    TARGET_LABELS[target],
    formatNumber(result.requestsPerSecond, 0),
    gatewayCpuCell(target, result),
    formatNumber(result.latency.p50),
    formatNumber(result.latency.p99),
    isDirect ? '' : formatDelta(result.latency.p50 - direct.latency.p50),
    isDirect ? '' : formatDelta(result.latency.p99 - direct.latency.p99),
    errorsCell(result.errors, result.errorKinds),
    [note, costNote(result, 'request')].filter(Boolean).join('; '),
  ];
}

/** The small uploads: the load row, with the rate uploaded and the gateway's CPU per MB. */
function uploadLoadRow(run: number, target: TargetName, upload: UploadResult, direct: UploadResult | undefined): string[] {
  const label = `${UPLOAD_CONNECTIONS} connections, transcription uploads of ${upload.smallMb} MB (${MEDIA_MODELS.transcriptions})`;
  const perMb = (['relay', 'edge'] as const).flatMap((name) => {
    const us = cpuOf(upload.load, name);
    return us === undefined ? [] : [`${name} ${formatNumber(us / upload.smallMb, 0)}`];
  });
  const note = [`${formatNumber(uploadMbPerSecond(upload.load, upload.smallMb), 0)} MB/s uploaded`, perMb.length > 0 ? `CPU us/MB: ${perMb.join(', ')}` : '']
    .filter(Boolean)
    .join('; ');
  return loadRow(run, label, target, upload.load, direct?.load, note);
}

/** The large upload alone: its time (in the latency columns), the rate uploaded and how far each gateway process's RSS rose. */
function largeUploadRow(run: number, target: TargetName, upload: UploadResult, direct: UploadResult | undefined): string[] {
  const { large } = upload;
  const isDirect = target === 'upstream' || direct === undefined;
  const growth = upload.rssGrowth.map((reading) => `${reading.name} ${formatDelta(reading.mb, 1)} MB`).join(', ');
  return [
    String(run),
    `one transcription upload of ${upload.largeMb} MB alone`,
    TARGET_LABELS[target],
    '',
    '',
    formatNumber(large.latency.p50),
    '',
    isDirect ? '' : formatDelta(large.latency.p50 - direct.large.latency.p50),
    '',
    errorsCell(large.errors, large.errorKinds),
    [`${formatNumber(uploadMbPerSecond(large, upload.largeMb), 0)} MB/s uploaded`, growth ? `RSS peak - before: ${growth}` : ''].filter(Boolean).join('; '),
  ];
}

/** A stream case; `withRate` for the closed-loop ones, whose streams per second mean something. */
function streamRow(
  run: number,
  label: string,
  target: TargetName,
  result: StreamResult,
  direct: StreamResult | undefined,
  withRate = false,
): string[] {
  const isDirect = target === 'upstream' || direct === undefined;
  const gap = `chunk gap p50 ${formatNumber(result.gap.p50)} / p99 ${formatNumber(result.gap.p99)} ms`;
  const addedGap = isDirect ? '' : ` (${formatDelta(result.gap.p50 - direct.gap.p50)} / ${formatDelta(result.gap.p99 - direct.gap.p99)})`;
  return [
    String(run),
    label,
    TARGET_LABELS[target],
    withRate ? formatNumber(result.requestsPerSecond, 0) : '',
    gatewayCpuCell(target, result),
    formatNumber(result.firstByte.p50),
    formatNumber(result.firstByte.p99),
    isDirect ? '' : formatDelta(result.firstByte.p50 - direct.firstByte.p50),
    isDirect ? '' : formatDelta(result.firstByte.p99 - direct.firstByte.p99),
    errorsCell(result.errors, result.errorKinds),
    [`${gap}${addedGap}; merged chunks ${result.merged}/${result.chunks}; ${result.ok}/${result.streams} complete`, costNote(result, 'stream')]
      .filter(Boolean)
      .join('; '),
  ];
}

/** The cells of the fake upstream's row for a cloud channel's kind: it takes only signed calls, which the relay makes. */
const NOT_ASKED_DIRECTLY = ['', '', '', '', '', '', '', 'not asked directly: the fake takes these calls only SigV4-signed or with a Vertex access token'];

/** One markdown table: every case of every run, latencies in ms, "+" columns versus the fake upstream direct. */
export function renderTable(runs: RunResult[], options: TableOptions): string {
  const header = ['run', 'case', 'target', 'req/s', 'CPU us/call edge+relay', 'p50 ms', 'p99 ms', '+p50 ms', '+p99 ms', 'errors', 'notes'];
  const rows: string[][] = [];
  for (const run of runs) {
    const direct = run.targets.find((t) => t.target === 'upstream');
    for (const t of run.targets) {
      if (t.single) rows.push(loadRow(run.run, '1 connection', t.target, t.single, direct?.single));
    }
    for (const t of run.targets) {
      if (t.concurrent) rows.push(loadRow(run.run, `${options.connections} connections`, t.target, t.concurrent, direct?.concurrent));
    }
    for (const kind of CALL_KINDS) {
      const label = `${options.connections} connections, ${CALL_LABELS[kind]}`;
      const measured = run.targets.some((t) => t.wholeLoad?.[kind]);
      if (direct && measured && !DIRECT_KINDS.includes(kind)) rows.push([String(run.run), label, TARGET_LABELS.upstream, ...NOT_ASKED_DIRECTLY]);
      for (const t of run.targets) {
        const result = t.wholeLoad?.[kind];
        if (result) rows.push(loadRow(run.run, label, t.target, result, direct?.wholeLoad?.[kind]));
      }
    }
    for (const t of run.targets) {
      if (t.streams) {
        const label = `${options.streams} concurrent streams x ${options.chunks} chunks (${options.chunkDelayMs} ms apart): first byte`;
        rows.push(streamRow(run.run, label, t.target, t.streams, direct?.streams));
      }
    }
    for (const t of run.targets) {
      if (t.streamBurst) {
        const label = `${options.streams} streams requested at once: first byte`;
        rows.push(streamRow(run.run, label, t.target, t.streamBurst, direct?.streamBurst));
      }
    }
    for (const kind of CALL_KINDS) {
      const label = `${options.connections} streaming connections, ${CALL_LABELS[kind]}: first byte`;
      for (const t of run.targets) {
        const result = t.streamLoad?.[kind];
        if (result) rows.push(streamRow(run.run, label, t.target, result, direct?.streamLoad?.[kind], true));
      }
    }
    for (const t of run.targets) {
      if (!t.openStreams) continue;
      const label = `${options.openStreams} streams open together, ${options.openStreamMs / 1000} s each: first byte`;
      const row = streamRow(run.run, label, t.target, t.openStreams.result, direct?.openStreams?.result);
      const memory = t.openStreams.memoryPerStream.map(({ name, kb }) => `${name} ${formatNumber(kb, 1)} KB`).join(', ');
      if (memory) row[row.length - 1] = `RSS per open stream: ${memory}; ${row[row.length - 1]}`;
      rows.push(row);
    }
    for (const t of run.targets) {
      if (t.upload) rows.push(uploadLoadRow(run.run, t.target, t.upload, direct?.upload));
    }
    for (const t of run.targets) {
      if (t.upload) rows.push(largeUploadRow(run.run, t.target, t.upload, direct?.upload));
    }
    const rss = run.rss.map((r) => `${r.name} ${formatNumber(r.mb, 1)} MB`).join(', ');
    rows.push([String(run.run), 'RSS after the run', '', '', '', '', '', '', '', '', rss]);
  }
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The side-by-side figures of a run with a peer: its completions rate at 1 and N connections, and
 * Modelgate's through the edge and the relay alone as a multiple of it (and, with the peer's
 * process watched, the CPU per call of edge + relay as a multiple of the peer's).
 */
export function peerComparison(run: RunResult, connections: number): string[] {
  const find = (name: TargetName) => run.targets.find((t) => t.target === name);
  const peer = find('peer');
  const lines: string[] = [];
  for (const [label, pick] of [
    ['1 connection', (t: TargetResult | undefined) => t?.single],
    [`${connections} connections`, (t: TargetResult | undefined) => t?.concurrent],
  ] as const) {
    const peerResult = pick(peer);
    if (!peerResult) continue;
    const ratios = (['edge', 'relay'] as const).flatMap((name) => {
      const ours = pick(find(name));
      return ours ? [`${name} / peer ${formatNumber(ours.requestsPerSecond / peerResult.requestsPerSecond)}x`] : [];
    });
    const peerCpu = gatewayCpuPerCall('peer', peerResult);
    const edge = pick(find('edge'));
    const edgeCpu = edge && gatewayCpuPerCall('edge', edge);
    if (peerCpu !== undefined && edgeCpu !== undefined) ratios.push(`CPU per call edge+relay / peer ${formatNumber(edgeCpu / peerCpu)}x`);
    const peerCpuNote = peerCpu === undefined ? '' : `, ${formatNumber(peerCpu, 0)} CPU us/call`;
    lines.push(`completions at ${label}: peer ${formatNumber(peerResult.requestsPerSecond, 0)} req/s${peerCpuNote}, ${peerResult.errors} errors; ${ratios.join(', ')}`);
  }
  return lines;
}
