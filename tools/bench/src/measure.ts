import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { CaseName, Settings } from './cli';
import { bodyOf, type LoadResult, REQUEST_TIMEOUT_MS, RequestLoad, runLoad } from './load';
import { CpuAccount, type CpuCost, rssMb, type WatchedProcess, withCpuCost, withRssGrowth } from './process-stats';
import type { TargetName, TargetResult } from './report';
import {
  CALL_LABELS,
  type Call,
  type CallKind,
  callOf,
  CHAT_KINDS,
  CLOUD_KINDS,
  DIRECT_KINDS,
  GEMINI_KINDS,
  IMAGES_KINDS,
  LIMITED_KINDS,
  MESSAGES_KINDS,
  RESPONSES_KINDS,
} from './requests';
import { runOpenStreams, runStreamBurst, runStreams, StreamLoad } from './streams';
import { UPLOAD_CONNECTIONS, uploadCall, withUploadBodies } from './uploads';

export interface Target {
  name: TargetName;
  origin: string;
  /** Calls through the relay: each successful one must have its consume row in the ledger. */
  billed: boolean;
  cases: ReadonlySet<CaseName>;
  /** How a call reaches a target that is not ours (the peer's base path and routing headers). */
  route?: (call: Call) => Call;
}

/** Cases with the request kinds each sends. */
type CaseKinds = readonly (readonly [CaseName, readonly CallKind[]])[];

/** The kinds each whole-answer case sends at N connections, in turns with the concurrent completions. */
const WHOLE_CASES = [
  ['chat', CHAT_KINDS],
  ['messages', MESSAGES_KINDS],
  ['responses', RESPONSES_KINDS],
  ['gemini', GEMINI_KINDS],
  // With the OpenAI pass-through chat, their baseline.
  ['clouds', ['chat-openai', ...CLOUD_KINDS]],
  ['images', ['chat-openai', ...IMAGES_KINDS]],
  ['chat-limited', LIMITED_KINDS],
] as const satisfies CaseKinds;

/** The kinds each streaming case sends at N connections, in turns with completions streams. */
const STREAM_CASES = [
  ['chat-streams', CHAT_KINDS],
  ['messages-streams', MESSAGES_KINDS],
  ['responses-streams', RESPONSES_KINDS],
  ['gemini-streams', GEMINI_KINDS],
] as const satisfies CaseKinds;

/** The kinds of the chosen cases, each once; the fake upstream direct is asked only its own. */
const kindsOf = (cases: CaseKinds, chosen: ReadonlySet<CaseName>, direct: boolean): CallKind[] => [
  ...new Set(cases.flatMap(([name, kinds]) => (chosen.has(name) ? kinds : []))),
].filter((kind) => !direct || DIRECT_KINDS.includes(kind));

/** The gateway's processes a call to each target passes: the ones whose RSS an upload must not raise. */
const PASSED_PROCESSES: Partial<Record<TargetName, readonly string[]>> = { relay: ['relay'], edge: ['edge', 'relay'] };

/** The open-streams case's requests are spread over this long: a listen backlog takes hundreds at once, not thousands. */
const OPEN_STREAMS_RAMP_MS = 3_000;

/** Successful billed calls so far, for the "one consume row per call" check. */
export class CallCounter {
  successful = 0;

  add(target: Target, result: { ok: number }): void {
    if (target.billed) this.successful += result.ok;
  }
}

/** Turns each case of a group compared with each other takes (its duration split between them). */
const TURNS = 5;

/** A load that runs several times on its open connections, then tells the outcome of all its runs. */
interface TurnTaker<R> {
  run(durationMs: number): Promise<void>;
  close(): Promise<R>;
}

/**
 * Cases compared with each other take turns in slices, `durationMs` each in all: a change in the
 * machine's load (other guests, a collection, a ledger flush) falls on all of them alike instead of
 * on whichever ran at the time. Outcomes in the order of the loads, with their CPU per request.
 */
async function inTurns<R extends { ok: number; cpuPerRequest?: CpuCost[]; stealPercent?: number }>(
  loads: TurnTaker<R>[],
  durationMs: number,
  processes: WatchedProcess[],
): Promise<R[]> {
  const accounted = loads.map((load) => ({ load, cpu: new CpuAccount(processes) }));
  for (let turn = 0; turn < TURNS; turn++) {
    for (const { load, cpu } of accounted) await cpu.during(() => load.run(durationMs / TURNS));
  }
  const outcomes: R[] = [];
  for (const { load, cpu } of accounted) outcomes.push(cpu.charge(await load.close()));
  return outcomes;
}

/** One plain call first: the answer must be a whole answer of its kind with usage, or the numbers would mean nothing. */
async function sanityCheck(call: Call, target: TargetName): Promise<void> {
  const pool = new Pool(call.origin);
  try {
    const response = await pool.request({ path: call.path, method: 'POST', headers: call.headers, body: bodyOf(call) });
    const text = await response.body.text();
    if (response.statusCode !== 200 || !call.isAnswer(JSON.parse(text))) {
      throw new Error(`${target} answered ${call.path} with ${response.statusCode}: ${text.slice(0, 300)}`);
    }
  } finally {
    await pool.close();
  }
}

/**
 * Every case of one target: warm-up, 1 connection, then completions and the other whole-answer kinds
 * at N connections in turns, the stream cases, then completions and the other kinds' streams at N
 * connections in turns, then the transcription uploads: one large upload alone (the RSS of the
 * gateway processes it passes sampled meanwhile) and small ones at a few connections. Each request
 * kind is checked once and warmed up before its first measurement, so no case pays for another's
 * JIT compilation.
 */
export async function measureTarget(
  target: Target,
  { key, limitedKey }: { key: string; limitedKey?: string | undefined },
  settings: Settings,
  counter: CallCounter,
  processes: WatchedProcess[],
  log: (line: string) => void,
): Promise<TargetResult> {
  const { cases } = target;
  const direct = target.name === 'upstream';
  const callFor = (kind: CallKind, stream: boolean): Call => {
    const call = callOf(kind, { origin: target.origin, direct, key, limitedKey, completionsModel: settings.model, chunks: settings.chunks, stream });
    return target.route ? target.route(call) : call;
  };
  const counted = <T extends { ok: number }>(result: T): T => {
    counter.add(target, result);
    return result;
  };
  const seconds = (ms: number) => `${ms / 1000} s`;
  const load = (call: Call, connections: number): Promise<LoadResult> =>
    withCpuCost(processes, () => runLoad(call, connections, settings.durationMs));
  const warmedUp = async (call: Call, label: string, connections = settings.connections): Promise<Call> => {
    await sanityCheck(call, target.name);
    counted({ ok: 1 });
    log(`${target.name}: ${label} warm-up ${seconds(settings.warmupMs)}`);
    counted(await runLoad(call, connections, settings.warmupMs));
    return call;
  };
  // Slots start spread over one stream's length, so arrivals are even.
  const spreadMs = settings.chunks * settings.chunkDelayMs;
  const until = (ms: number) => {
    const deadline = performance.now() + ms;
    return () => performance.now() < deadline;
  };
  const streamShape = { concurrency: settings.connections, spreadMs, expectedChunks: settings.chunks };

  const result: TargetResult = { target: target.name };
  const completions = await warmedUp(callFor('completions', false), CALL_LABELS.completions);
  if (cases.has('single')) {
    log(`${target.name}: 1 connection, ${seconds(settings.durationMs)}`);
    result.single = counted(await load(completions, 1));
  }
  const whole: { kind: CallKind; call: Call; keep(outcome: LoadResult): void }[] = [];
  if (cases.has('concurrent')) whole.push({ kind: 'completions', call: completions, keep: (outcome) => (result.concurrent = outcome) });
  const wholeKinds = kindsOf(WHOLE_CASES, cases, direct);
  if (wholeKinds.length > 0) {
    const wholeLoad: NonNullable<TargetResult['wholeLoad']> = {};
    result.wholeLoad = wholeLoad;
    for (const kind of wholeKinds) {
      whole.push({ kind, call: await warmedUp(callFor(kind, false), CALL_LABELS[kind]), keep: (outcome) => (wholeLoad[kind] = outcome) });
    }
  }
  if (whole.length > 0) {
    log(`${target.name}: ${whole.map(({ kind }) => CALL_LABELS[kind]).join(', ')} in turns, ${settings.connections} connections, ${seconds(settings.durationMs)} each`);
    const outcomes = await inTurns(
      whole.map(({ call }) => new RequestLoad(call, settings.connections)),
      settings.durationMs,
      processes,
    );
    outcomes.forEach((outcome, index) => whole[index]?.keep(counted(outcome)));
  }
  if (cases.has('streams')) {
    const streamCall = callFor('completions', true);
    log(`${target.name}: ${settings.streams} streams at once, then ${settings.streams} concurrent streams x ${settings.streamRounds}`);
    const { opening, burst } = await runStreamBurst(streamCall, settings.streams, settings.chunks);
    counted(opening);
    result.streamBurst = counted(burst);
    const shape = { concurrency: settings.streams, spreadMs, expectedChunks: settings.chunks };
    result.streams = counted(await withCpuCost(processes, () => runStreams(streamCall, shape, (run) => run < settings.streamRounds)));
  }
  const streamKinds = kindsOf(STREAM_CASES, cases, direct);
  if (streamKinds.length > 0) {
    const calls = (['completions', ...streamKinds] as const).map((kind) => ({ kind, call: callFor(kind, true) }));
    for (const { kind, call } of calls) {
      log(`${target.name}: ${CALL_LABELS[kind]} streams warm-up ${seconds(settings.warmupMs)}`);
      counted(await runStreams(call, streamShape, until(settings.warmupMs)));
    }
    log(`${target.name}: ${calls.map(({ kind }) => CALL_LABELS[kind]).join(', ')} in turns, ${settings.connections} streaming connections, ${seconds(settings.durationMs)} each`);
    const outcomes = await inTurns(
      calls.map(({ call }) => {
        const streams = new StreamLoad(call, streamShape);
        return { run: (ms: number) => streams.run(until(ms)), close: () => streams.close() };
      }),
      settings.durationMs,
      processes,
    );
    const streams: NonNullable<TargetResult['streamLoad']> = {};
    outcomes.forEach((outcome, index) => {
      const kind = calls[index]?.kind;
      if (kind) streams[kind] = counted(outcome);
    });
    result.streamLoad = streams;
  }
  if (cases.has('open-streams')) {
    const passed = processes.filter((watched) => PASSED_PROCESSES[target.name]?.includes(watched.name));
    const fast = callFor('completions', true);
    // The fake spaces this case's chunks out (fake_chunk_delay_ms), the other streams keep theirs.
    const chunkDelayMs = Math.round(settings.openStreamMs / Math.max(1, settings.chunks - 1));
    const slow = { ...fast, body: JSON.stringify({ ...(JSON.parse(fast.body as string) as object), fake_chunk_delay_ms: chunkDelayMs }) };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const before = passed.map((watched) => rssMb(watched.pid));
    let open: (number | undefined)[] = [];
    log(`${target.name}: ${settings.openStreams} streams open together, requested over ${OPEN_STREAMS_RAMP_MS / 1000} s, ${settings.openStreamMs / 1000} s each`);
    const streams = counted(
      await runOpenStreams(slow, settings.openStreams, settings.chunks, OPEN_STREAMS_RAMP_MS, () => {
        open = passed.map((watched) => rssMb(watched.pid));
      }),
    );
    const memoryPerStream = passed.map((watched, index) => {
      const start = before[index];
      const peak = open[index];
      return { name: watched.name, kb: start === undefined || peak === undefined ? undefined : ((peak - start) * 1024) / settings.openStreams };
    });
    result.openStreams = { result: streams, memoryPerStream };
  }
  if (cases.has('transcription-upload')) {
    const passed = processes.filter((watched) => PASSED_PROCESSES[target.name]?.includes(watched.name));
    result.upload = await withUploadBodies(async ({ small, large }) => {
      const smallCall = await warmedUp(uploadCall(target.origin, key, small), `transcription uploads of ${small.fileMb} MB`, UPLOAD_CONNECTIONS);
      // The warm-up's uploads settle first: the reading before the large upload is one at rest.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const sampled = passed.length > 0 ? `, RSS of ${passed.map(({ name }) => name).join(' and ')} sampled` : '';
      log(`${target.name}: one transcription upload of ${large.fileMb} MB alone${sampled}`);
      // One request, given as long as a request may take.
      const alone = await withRssGrowth(passed, () => runLoad(uploadCall(target.origin, key, large), 1, REQUEST_TIMEOUT_MS, 1));
      log(`${target.name}: transcription uploads of ${small.fileMb} MB, ${UPLOAD_CONNECTIONS} connections, ${seconds(settings.durationMs)}`);
      const uploads = counted(await load(smallCall, UPLOAD_CONNECTIONS));
      return { load: uploads, smallMb: small.fileMb, large: counted(alone.result), largeMb: large.fileMb, rssGrowth: alone.rssGrowth };
    });
  }
  return result;
}
