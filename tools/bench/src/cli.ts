import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Peer, peerHeadersOf } from './peer';
import { TARGETS, type TargetName } from './report';
import type { ServiceName } from './stack';

export const USAGE = `pnpm bench [options]
  --runs N              consecutive runs (RSS growth check), default 1
  --duration S          seconds per measured case, default 10 (the N-connection cases run in 5 turns
                        each, taking turns with the cases they are compared with)
  --warmup S            seconds of warm-up at N connections per target and request kind, default 3
  --connections N       connections of the concurrent, whole-answer and streaming-connection cases,
                        default 50
  --streams N           concurrent streams, default 100
  --stream-rounds N     streams per slot of the concurrent-streams case, default 3
  --open-streams N      streams held open together in the open-streams case, default 2000
  --open-stream-seconds S  how long each of them lasts (its chunks evenly spread), default 30
  --chunks N            chunks per streamed answer, default 20
  --chunk-delay-ms N    delay between upstream chunks, default 20
  --targets LIST        subset of upstream,relay,edge,peer (default all; peer when --peer-url is given)
  --cases LIST          subset of single,concurrent,streams,chat,chat-limited,chat-streams,messages,
                        messages-streams,responses,responses-streams,gemini,gemini-streams,clouds,
                        images,transcription-upload,open-streams (default all); chat-limited: OpenAI chat with a
                        key that has rpm, tpm and concurrency limits and a budget (none reached),
                        against the same chat with the plain key; clouds: chat through AWS Bedrock
                        (Converse, SigV4) and generateContent through Google Vertex AI, with the
                        OpenAI chat as baseline (the fake upstream is not asked them directly: it
                        wants signed calls); images: dall-e-3 generations (b64_json) through the
                        OpenAI channel, with the OpenAI chat as baseline; transcription-upload:
                        whisper-1 uploads of a WAV file, one of 20 MB alone (the RSS growth of relay
                        and edge) and 1 MB ones at 4 connections (CPU per call and per MB);
                        open-streams: --open-streams slow completion streams open at once (memory
                        per open stream of each process, first byte, errors)
  --service-env S:K=V   extra environment for one service (repeatable), e.g. relay:LOG_LEVEL=warn
  --node-arg S:ARG      extra node option for one service (repeatable), e.g. relay:--trace-gc
  --cpu-prof            write CPU profiles of relay and edge and summarise them
  --no-build            use apps/*/dist as they are
  --apps-root DIR       run the bundles of another checkout (built there), e.g. a baseline
  --model NAME          model of the completions, default gpt-3.5-turbo-instruct (chat: gpt-4o-mini
                        on the OpenAI channel, claude-sonnet-4-5 on the Anthropic one, gemini-2.5-flash
                        on the Gemini one, gpt-4.1-mini as amazon.nova-pro-v1:0 on the Bedrock one,
                        gemini-2.5-flash-lite on the Vertex one)
 Side by side with another gateway in front of the same fake upstream (single and concurrent only):
  --peer-url URL        its OpenAI base URL, e.g. http://127.0.0.1:8787/v1 (calls go to URL/completions)
  --peer-header 'N: V'  a routing header on its calls (repeatable); {upstream} in V stands for the
                        fake upstream's URL
  --peer-pid N          its process, to measure its CPU per call (with its child processes)
 A running stack instead of a private one:
  --upstream-url URL --relay-url URL --edge-url URL --key sk-...
  [--database-url URL]  its database, for the ledger checks
  [--limited-key sk-...] a key of the same user with limits and a budget that are never reached
                        (the chat-limited case; skipped without it)`;

/**
 * single / concurrent: completions at 1 and N connections; streams: completion streams (concurrent,
 * then a burst); chat, messages, responses: whole answers of that surface at N connections through
 * the OpenAI and the Anthropic channel (passed through on the channel that speaks it, translated on
 * the other); gemini: generateContent through the Gemini channel; clouds: chat through the Bedrock
 * channel (Converse) and generateContent through the Vertex AI one, with the OpenAI pass-through chat
 * as their baseline; images: image generations through the OpenAI channel, with the same baseline;
 * chat-limited: the OpenAI pass-through chat with a key that has every limit and a budget, with the
 * same baseline (what the limits cost per call);
 * each `-streams` case: the same as streams at N connections. The whole-answer cases run in turns
 * together with concurrent, the streaming ones with completions streams as their baseline.
 * transcription-upload: multipart audio uploads streamed from disk, a large one alone (the RSS it
 * adds to the gateway) and small ones at a few connections (CPU per call and per MB).
 * open-streams: thousands of slow completion streams held open together, as agents hold them: what
 * each open stream costs every process in memory, and whether any first byte waits.
 */
export const CASES = [
  'single',
  'concurrent',
  'streams',
  'chat',
  'chat-limited',
  'chat-streams',
  'messages',
  'messages-streams',
  'responses',
  'responses-streams',
  'gemini',
  'gemini-streams',
  'clouds',
  'images',
  'transcription-upload',
  'open-streams',
] as const;
export type CaseName = (typeof CASES)[number];

/** The peer runs the completions load only: the other surfaces need the channels of our seeding. */
export const PEER_CASES: readonly CaseName[] = ['single', 'concurrent'];

/** What to measure and how. */
export interface Settings {
  runs: number;
  durationMs: number;
  warmupMs: number;
  connections: number;
  streams: number;
  streamRounds: number;
  openStreams: number;
  openStreamMs: number;
  chunks: number;
  chunkDelayMs: number;
  targets: TargetName[];
  cases: Set<CaseName>;
  model: string;
  peer: Peer | undefined;
}

/** Where the stack comes from: started here, or already running. */
export type StackChoice =
  | {
      kind: 'private';
      build: boolean;
      appsRoot: string | undefined;
      serviceEnv: Partial<Record<ServiceName, Record<string, string>>>;
      nodeArgs: Partial<Record<ServiceName, string[]>>;
      cpuProfile: boolean;
    }
  | {
      kind: 'running';
      upstreamUrl: string;
      relayUrl: string;
      edgeUrl: string;
      key: string;
      limitedKey: string | undefined;
      databaseUrl: string | undefined;
    };

export interface Command {
  help: boolean;
  settings: Settings;
  stack: StackChoice;
}

const SERVICE = '(account|relay|worker|edge)';

function positive(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

function listOf<T extends string>(name: string, text: string, allowed: readonly T[]): T[] {
  const items = text.split(',').map((item) => item.trim());
  const unknown = items.filter((item) => !(allowed as readonly string[]).includes(item));
  if (unknown.length > 0) throw new Error(`--${name}: unknown ${unknown.join(', ')} (expected ${allowed.join(', ')})`);
  return items as T[];
}

/** `service:NAME=value` assignments, by service. */
function serviceEnvOf(assignments: string[]): Partial<Record<ServiceName, Record<string, string>>> {
  const byService: Partial<Record<ServiceName, Record<string, string>>> = {};
  for (const assignment of assignments) {
    const [, matched, name, value] = new RegExp(`^${SERVICE}:([A-Z0-9_]+)=(.*)$`).exec(assignment) ?? [];
    if (matched === undefined || name === undefined || value === undefined) {
      throw new Error(`--service-env ${assignment}: expected service:NAME=value`);
    }
    const service = matched as ServiceName;
    byService[service] = { ...byService[service], [name]: value };
  }
  return byService;
}

/** `service:--option` assignments, by service. */
function nodeArgsOf(assignments: string[]): Partial<Record<ServiceName, string[]>> {
  const byService: Partial<Record<ServiceName, string[]>> = {};
  for (const assignment of assignments) {
    const [, matched, option] = new RegExp(`^${SERVICE}:(--.+)$`).exec(assignment) ?? [];
    if (matched === undefined || option === undefined) throw new Error(`--node-arg ${assignment}: expected service:--option`);
    const service = matched as ServiceName;
    byService[service] = [...(byService[service] ?? []), option];
  }
  return byService;
}

function peerOf(url: string | undefined, headers: string[], pid: string | undefined): Peer | undefined {
  if (url === undefined) {
    if (headers.length > 0 || pid !== undefined) throw new Error('--peer-header and --peer-pid need --peer-url');
    return undefined;
  }
  if (!URL.canParse(url)) throw new Error(`--peer-url ${url} is not a URL`);
  return { url, headers: peerHeadersOf(headers), pid: pid === undefined ? undefined : positive('peer-pid', pid) };
}

export function parseCommand(argv: string[]): Command {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '1' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      streams: { type: 'string', default: '100' },
      'stream-rounds': { type: 'string', default: '3' },
      'open-streams': { type: 'string', default: '2000' },
      'open-stream-seconds': { type: 'string', default: '30' },
      chunks: { type: 'string', default: '20' },
      'chunk-delay-ms': { type: 'string', default: '20' },
      targets: { type: 'string' },
      cases: { type: 'string', default: CASES.join(',') },
      'service-env': { type: 'string', multiple: true, default: [] },
      'node-arg': { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      'apps-root': { type: 'string' },
      model: { type: 'string', default: 'gpt-3.5-turbo-instruct' },
      'peer-url': { type: 'string' },
      'peer-header': { type: 'string', multiple: true, default: [] },
      'peer-pid': { type: 'string' },
      'upstream-url': { type: 'string' },
      'relay-url': { type: 'string' },
      'edge-url': { type: 'string' },
      key: { type: 'string' },
      'limited-key': { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const chunkDelayMs = Number(values['chunk-delay-ms']);
  if (!Number.isFinite(chunkDelayMs) || chunkDelayMs < 0) throw new Error('--chunk-delay-ms must be 0 or more');
  const peer = peerOf(values['peer-url'], values['peer-header'] ?? [], values['peer-pid']);
  const cases = new Set(listOf('cases', values.cases!, CASES));
  const targets = values.targets === undefined ? TARGETS.filter((name) => name !== 'peer' || peer) : listOf('targets', values.targets, TARGETS);
  if (targets.includes('peer') && !peer) throw new Error('--targets peer needs --peer-url');
  if (targets.includes('peer') && !PEER_CASES.some((name) => cases.has(name))) {
    throw new Error(`the peer runs only ${PEER_CASES.join(' and ')}: add one to --cases`);
  }
  const settings: Settings = {
    runs: positive('runs', values.runs),
    durationMs: positive('duration', values.duration) * 1000,
    warmupMs: positive('warmup', values.warmup) * 1000,
    connections: positive('connections', values.connections),
    streams: positive('streams', values.streams),
    streamRounds: positive('stream-rounds', values['stream-rounds']),
    openStreams: positive('open-streams', values['open-streams']),
    openStreamMs: positive('open-stream-seconds', values['open-stream-seconds']) * 1000,
    chunks: positive('chunks', values.chunks),
    chunkDelayMs,
    targets,
    cases,
    model: values.model!,
    peer,
  };
  if (values['edge-url'] !== undefined) {
    const { 'upstream-url': upstreamUrl, 'relay-url': relayUrl, key } = values;
    if (!upstreamUrl || !relayUrl || !key) throw new Error('--edge-url needs --relay-url, --upstream-url and --key');
    return {
      help: values.help!,
      settings,
      stack: {
        kind: 'running',
        upstreamUrl,
        relayUrl,
        edgeUrl: values['edge-url'],
        key,
        limitedKey: values['limited-key'],
        databaseUrl: values['database-url'],
      },
    };
  }
  return {
    help: values.help!,
    settings,
    stack: {
      kind: 'private',
      build: !values['no-build'],
      appsRoot: values['apps-root'] ? resolve(values['apps-root']) : undefined,
      serviceEnv: serviceEnvOf(values['service-env'] ?? []),
      nodeArgs: nodeArgsOf(values['node-arg'] ?? []),
      cpuProfile: values['cpu-prof']!,
    },
  };
}
