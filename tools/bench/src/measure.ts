import { Pool } from 'undici';
import type { Settings } from './cli';
import { type LoadResult, type RequestSpec, runLoad } from './load';
import { type WatchedProcess, withCpuCost } from './process-stats';
import type { TargetName, TargetResult } from './report';
import { runStreamBurst, runStreams } from './streams';

export interface Target {
  name: TargetName;
  origin: string;
  /** Calls through the relay: each successful one must have its consume row in the ledger. */
  billed: boolean;
}

/** Successful billed calls so far, for the "one consume row per call" check. */
export class CallCounter {
  successful = 0;

  add(target: Target, result: { ok: number }): void {
    if (target.billed) this.successful += result.ok;
  }
}

function completionSpec(origin: string, key: string, settings: Settings, stream: boolean): RequestSpec {
  return {
    origin,
    path: '/v1/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: settings.model, prompt: 'Say hello to the benchmark', max_tokens: settings.chunks, temperature: 0.7, stream }),
  };
}

/** One plain call first: the answer must be a completion with usage, or the numbers would mean nothing. */
async function sanityCheck(spec: RequestSpec, target: TargetName): Promise<void> {
  const pool = new Pool(spec.origin);
  try {
    const response = await pool.request({ path: spec.path, method: 'POST', headers: spec.headers, body: spec.body });
    const text = await response.body.text();
    const body = JSON.parse(text) as { object?: string; usage?: { completion_tokens?: number } };
    if (response.statusCode !== 200 || body.object !== 'text_completion' || !body.usage?.completion_tokens) {
      throw new Error(`${target} answered ${response.statusCode}: ${text.slice(0, 300)}`);
    }
  } finally {
    await pool.close();
  }
}

/** Every case of one target: warm-up, 1 connection, N connections, then the stream cases. */
export async function measureTarget(
  target: Target,
  key: string,
  settings: Settings,
  counter: CallCounter,
  processes: WatchedProcess[],
  log: (line: string) => void,
): Promise<TargetResult> {
  const spec = completionSpec(target.origin, key, settings, false);
  const counted = <T extends { ok: number }>(result: T): T => {
    counter.add(target, result);
    return result;
  };
  await sanityCheck(spec, target.name);
  counted({ ok: 1 });
  log(`${target.name}: warm-up ${settings.warmupMs / 1000} s`);
  counted(await runLoad(spec, settings.connections, settings.warmupMs));
  const result: TargetResult = { target: target.name };
  const load = (connections: number): Promise<LoadResult> => withCpuCost(processes, () => runLoad(spec, connections, settings.durationMs));
  if (settings.cases.has('single')) {
    log(`${target.name}: 1 connection, ${settings.durationMs / 1000} s`);
    result.single = counted(await load(1));
  }
  if (settings.cases.has('concurrent')) {
    log(`${target.name}: ${settings.connections} connections, ${settings.durationMs / 1000} s`);
    result.concurrent = counted(await load(settings.connections));
  }
  if (settings.cases.has('streams')) {
    const streamSpec = completionSpec(target.origin, key, settings, true);
    log(`${target.name}: ${settings.streams} streams at once, then ${settings.streams} concurrent streams x ${settings.streamRounds}`);
    const { opening, burst } = await runStreamBurst(streamSpec, settings.streams, settings.chunks);
    counted(opening);
    result.streamBurst = counted(burst);
    // Slots start spread over one stream's length, so arrivals are even.
    const spreadMs = settings.chunks * settings.chunkDelayMs;
    result.streams = counted(
      await withCpuCost(processes, () => runStreams(streamSpec, settings.streams, settings.streamRounds, settings.chunks, spreadMs)),
    );
  }
  return result;
}
