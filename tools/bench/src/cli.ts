import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TARGETS, type TargetName } from './report';
import type { ServiceName } from './stack';

export const USAGE = `pnpm bench [options]
  --runs N              consecutive runs (RSS growth check), default 1
  --duration S          seconds per measured case, default 10 (the N-connection cases run in 5 turns
                        each, taking turns with the cases they are compared with)
  --warmup S            seconds of warm-up at N connections per target and request kind, default 3
  --connections N       connections of the concurrent, chat and streaming-connection cases, default 50
  --streams N           concurrent streams, default 100
  --stream-rounds N     streams per slot of the concurrent-streams case, default 3
  --chunks N            chunks per streamed answer, default 20
  --chunk-delay-ms N    delay between upstream chunks, default 20
  --targets LIST        subset of upstream,relay,edge (default all)
  --cases LIST          subset of single,concurrent,streams,chat,chat-streams,messages-streams
                        (default all)
  --service-env S:K=V   extra environment for one service (repeatable), e.g. relay:LOG_LEVEL=warn
  --node-arg S:ARG      extra node option for one service (repeatable), e.g. relay:--trace-gc
  --cpu-prof            write CPU profiles of relay and edge and summarise them
  --no-build            use apps/*/dist as they are
  --apps-root DIR       run the bundles of another checkout (built there), e.g. a baseline
  --model NAME          model of the completions, default gpt-3.5-turbo-instruct (chat: gpt-4o-mini
                        on the OpenAI channel, claude-sonnet-4-5 on the Anthropic one)
 A running stack instead of a private one:
  --upstream-url URL --relay-url URL --edge-url URL --key sk-...
  [--database-url URL]  its database, for the ledger checks`;

/**
 * single / concurrent: completions at 1 and N connections; streams: completion streams (concurrent,
 * then a burst); chat: chat completions at N connections through the OpenAI and the Anthropic
 * channel; chat-streams: streams at N connections, completions and chat through both channels;
 * messages-streams: Anthropic message streams at N connections through both channels (pass-through
 * on the Anthropic one, translated on the OpenAI one). The streaming-connection cases run in turns
 * together, with completions streams as their baseline.
 */
export const CASES = ['single', 'concurrent', 'streams', 'chat', 'chat-streams', 'messages-streams'] as const;
export type CaseName = (typeof CASES)[number];

/** What to measure and how. */
export interface Settings {
  runs: number;
  durationMs: number;
  warmupMs: number;
  connections: number;
  streams: number;
  streamRounds: number;
  chunks: number;
  chunkDelayMs: number;
  targets: TargetName[];
  cases: Set<CaseName>;
  model: string;
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
  | { kind: 'running'; upstreamUrl: string; relayUrl: string; edgeUrl: string; key: string; databaseUrl: string | undefined };

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
      chunks: { type: 'string', default: '20' },
      'chunk-delay-ms': { type: 'string', default: '20' },
      targets: { type: 'string', default: TARGETS.join(',') },
      cases: { type: 'string', default: CASES.join(',') },
      'service-env': { type: 'string', multiple: true, default: [] },
      'node-arg': { type: 'string', multiple: true, default: [] },
      'cpu-prof': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      'apps-root': { type: 'string' },
      model: { type: 'string', default: 'gpt-3.5-turbo-instruct' },
      'upstream-url': { type: 'string' },
      'relay-url': { type: 'string' },
      'edge-url': { type: 'string' },
      key: { type: 'string' },
      'database-url': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const chunkDelayMs = Number(values['chunk-delay-ms']);
  if (!Number.isFinite(chunkDelayMs) || chunkDelayMs < 0) throw new Error('--chunk-delay-ms must be 0 or more');
  const settings: Settings = {
    runs: positive('runs', values.runs),
    durationMs: positive('duration', values.duration) * 1000,
    warmupMs: positive('warmup', values.warmup) * 1000,
    connections: positive('connections', values.connections),
    streams: positive('streams', values.streams),
    streamRounds: positive('stream-rounds', values['stream-rounds']),
    chunks: positive('chunks', values.chunks),
    chunkDelayMs,
    targets: listOf('targets', values.targets!, TARGETS),
    cases: new Set(listOf('cases', values.cases!, CASES)),
    model: values.model!,
  };
  if (values['edge-url'] !== undefined) {
    const { 'upstream-url': upstreamUrl, 'relay-url': relayUrl, key } = values;
    if (!upstreamUrl || !relayUrl || !key) throw new Error('--edge-url needs --relay-url, --upstream-url and --key');
    return {
      help: values.help!,
      settings,
      stack: { kind: 'running', upstreamUrl, relayUrl, edgeUrl: values['edge-url'], key, databaseUrl: values['database-url'] },
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
