import type { LoadResult } from '../src/load';
import type { CpuCost } from '../src/process-stats';
import type { StreamResult } from '../src/streams';
import type { UploadResult } from '../src/uploads';
import { summarize } from '../src/stats';

/** A load case whose every latency is `latencyMs`, with the relay's CPU per request when given. */
export function loadResult(requestsPerSecond: number, latencyMs: number, relayUs?: number, errors = 0): LoadResult {
  return {
    connections: 50,
    durationMs: 10_000,
    ok: requestsPerSecond * 10,
    errors,
    errorKinds: errors > 0 ? [`HTTP 502 x${errors}`] : [],
    requestsPerSecond,
    latency: summarize([latencyMs]),
    cpuPerRequest: relayUs === undefined ? undefined : cpu(relayUs),
  };
}

/** A stream case: first byte `firstByteMs`, `merged` of `chunks` chunks merged, the relay's CPU per stream when given. */
export function streamResult(firstByteMs: number, merged: number, chunks: number, relayUs?: number, errors = 0): StreamResult {
  return {
    streams: chunks / 20 + errors,
    ok: chunks / 20,
    errors,
    errorKinds: [],
    firstByte: summarize([firstByteMs]),
    gap: summarize([20]),
    total: summarize([400]),
    merged,
    chunks,
    requestsPerSecond: 120,
    cpuPerRequest: relayUs === undefined ? undefined : cpu(relayUs),
  };
}

function cpu(relayUs: number): CpuCost[] {
  return [
    { name: 'relay', us: relayUs },
    { name: 'edge', us: 300.4 },
  ];
}

/** The transcription-upload case: 1 MB uploads as `loadResult`, one 20 MB upload taking `largeMs`, with the RSS growth readings given. */
export function uploadResult(largeMs: number, rssGrowth: { name: string; mb: number }[], relayUs?: number, largeErrors = 0): UploadResult {
  const large = loadResult(1, largeMs, undefined, largeErrors);
  return {
    load: loadResult(50, 40, relayUs),
    smallMb: 1,
    large: { ...large, connections: 1, durationMs: largeMs, ok: largeErrors === 0 ? 1 : 0 },
    largeMb: 20,
    rssGrowth,
  };
}
