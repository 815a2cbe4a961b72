// `pnpm bench`: the gateway's hot path under load, with authentication and billing on. Starts the
// fake upstream and the whole stack on a private database (or uses a running stack given by URLs),
// measures the upstream directly, the relay directly and the edge (edge -> relay -> upstream), prints
// one markdown table, then checks the ledger. A tool, not a test: nothing here fails `pnpm test`.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPrismaClient, type PrismaClient, sha256Hex } from '@modelgate/db';
import { PEER_CASES, parseCommand, type Settings, type StackChoice, USAGE } from './cli';
import { goalChecks } from './goals';
import { databaseCostSince, markDatabase, renderDatabaseCost } from './database-cost';
import { type Check, checkLedger, waitForLedger } from './ledger-check';
import { CallCounter, measureTarget, type Target } from './measure';
import { PEER_PROCESS, peerCall } from './peer';
import { readRss, type WatchedProcess } from './process-stats';
import { summarizeProfiles } from './profile-summary';
import { peerComparison, renderTable, type RunResult, type TargetName, type TargetResult } from './report';
import { seedAccount } from './seed';
import { REPO_ROOT, type Stack, startStack } from './stack';

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const out = (text: string) => process.stdout.write(`${text}\n`);

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** What the measurements run against: URLs, a key, and (when known) the database for the ledger checks. */
interface Subject {
  /** Our targets; the peer's URL is a setting. */
  origins: Record<Exclude<TargetName, 'peer'>, string>;
  key: string;
  /** The key with limits and a budget (the chat-limited case), when known. */
  limitedKey: string | undefined;
  prisma: PrismaClient | undefined;
  userId: number | undefined;
  /** The private stack, when this run started one. */
  stack: Stack | undefined;
  profileDir: string | undefined;
}

async function privateSubject(choice: Extract<StackChoice, { kind: 'private' }>, settings: Settings): Promise<Subject> {
  const runDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const profileDir = choice.cpuProfile ? join(runDir, 'profiles') : undefined;
  if (profileDir) mkdirSync(profileDir);
  log(`starting the stack (service logs in ${runDir})`);
  let prisma: PrismaClient | undefined;
  let seeded: { userId: number; key: string; limitedKey: string } | undefined;
  const stack = await startStack({
    build: choice.build,
    appsRoot: choice.appsRoot ?? REPO_ROOT,
    logDir: runDir,
    chunks: settings.chunks,
    chunkDelayMs: settings.chunkDelayMs,
    cpuProfileDir: profileDir,
    serviceEnv: choice.serviceEnv,
    nodeArgs: choice.nodeArgs,
    log,
    seed: async ({ databaseUrl, upstreamUrl, cryptoSecret, vertexServiceAccount }) => {
      prisma = createPrismaClient({ databaseUrl, maxConnections: 2 });
      seeded = await seedAccount(prisma, { upstreamUrl, cryptoSecret, model: settings.model, vertexServiceAccount });
    },
  });
  log(`fake upstream: ${stack.upstreamUrl} ({upstream} in a --peer-header value)`);
  return {
    origins: { upstream: stack.upstreamUrl, relay: stack.relayUrl, edge: stack.edgeUrl },
    key: seeded!.key,
    limitedKey: seeded!.limitedKey,
    prisma,
    userId: seeded!.userId,
    stack,
    profileDir,
  };
}

async function runningSubject(choice: Extract<StackChoice, { kind: 'running' }>): Promise<Subject> {
  const subject: Subject = {
    origins: { upstream: choice.upstreamUrl, relay: choice.relayUrl, edge: choice.edgeUrl },
    key: choice.key,
    limitedKey: choice.limitedKey,
    prisma: undefined,
    userId: undefined,
    stack: undefined,
    profileDir: undefined,
  };
  if (choice.databaseUrl) {
    subject.prisma = createPrismaClient({ databaseUrl: choice.databaseUrl, maxConnections: 2 });
    const token = await subject.prisma.token.findUnique({ where: { keyHash: sha256Hex(choice.key) }, select: { userId: true } });
    if (!token) throw new Error('--key is not a key of that database');
    subject.userId = token.userId;
  }
  return subject;
}

/** Ours with every chosen case, or the peer with the completions ones, in front of the same fake upstream. */
function targetOf(name: TargetName, subject: Subject, settings: Settings): Target {
  if (name !== 'peer') return { name, origin: subject.origins[name], billed: name !== 'upstream', cases: settings.cases };
  const { peer } = settings;
  if (!peer) throw new Error('the peer target needs --peer-url');
  return {
    name,
    origin: new URL(peer.url).origin,
    billed: false,
    cases: new Set(PEER_CASES.filter((chosen) => settings.cases.has(chosen))),
    route: (call) => peerCall(call, peer, subject.origins.upstream),
  };
}

async function release(subject: Subject | undefined): Promise<void> {
  await subject?.prisma?.$disconnect();
  await subject?.stack?.stop();
}

async function main(): Promise<void> {
  const command = parseCommand(process.argv.slice(2));
  if (command.help) {
    out(USAGE);
    return;
  }
  const { settings } = command;
  const loadBefore = loadAverage();
  let subject: Subject | undefined;
  // Ctrl-C mid-run still stops the services and drops the private database and Redis keys.
  const interrupted = () => {
    log('interrupted: cleaning up');
    release(subject)
      .catch((err: unknown) => log(`cleanup failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    subject = command.stack.kind === 'private' ? await privateSubject(command.stack, settings) : await runningSubject(command.stack);
    if (subject.limitedKey === undefined && settings.cases.delete('chat-limited')) log('chat-limited skipped: no key with limits (--limited-key)');
    const processes = subject.stack?.processes ?? [];
    // The peer's CPU is read like ours; its RSS is not ours to judge.
    const peerPid = settings.peer?.pid;
    const watched: WatchedProcess[] = peerPid === undefined ? processes : [...processes, { name: PEER_PROCESS, pid: peerPid }];
    const counter = new CallCounter();
    const databaseBefore = subject.prisma ? await markDatabase(subject.prisma) : undefined;
    const runs: RunResult[] = [];
    for (let run = 1; run <= settings.runs; run++) {
      const targets: TargetResult[] = [];
      for (const name of settings.targets) {
        log(`run ${run}, load average ${loadAverage()}`);
        targets.push(await measureTarget(targetOf(name, subject, settings), subject, settings, counter, watched, log));
      }
      // Settle, then read: what stays resident, not what requests in flight hold.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      runs.push({ run, targets, rss: readRss(processes) });
    }

    out(`\n## pnpm bench: ${new Date().toISOString()}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}`);
    out(
      `load average before: ${loadBefore}, after: ${loadAverage()}; ${settings.durationMs / 1000} s per case after ` +
        `${settings.warmupMs / 1000} s warm-up; latency from request start to last byte; "+" columns: added versus ` +
        'the fake upstream direct; CPU us: per request, by process (* = shared server); CPU us/call edge+relay: the ' +
        "gateway's total per call through the edge (the peer's process, with --peer-pid)\n",
    );
    out(renderTable(runs, settings));
    const last = runs.at(-1);
    if (settings.peer && last) out(`\nSide by side with ${settings.peer.url} (last run):\n${peerComparison(last, settings.connections).join('\n')}`);

    const ledger: Check[] = [];
    if (subject.prisma && subject.userId !== undefined) {
      const expected = subject.stack ? counter.successful : undefined;
      log('waiting for the ledger flush');
      await waitForLedger(subject.prisma, subject.userId, expected);
      ledger.push(...(await checkLedger(subject.prisma, subject.userId, expected)));
      out('\nLedger:');
      for (const check of ledger) out(`${check.ok ? 'OK  ' : 'FAIL'} ${check.line}`);
      if (databaseBefore) {
        out('\nPostgreSQL, whole run (warm-ups included):');
        out(renderDatabaseCost(await databaseCostSince(subject.prisma, databaseBefore, counter.successful)).join('\n'));
      }
    }
    out('\nTargets (last run):');
    for (const check of goalChecks(runs, settings)) out(`${check.ok ? 'MET   ' : 'MISSED'} ${check.line}`);
    if (ledger.some((check) => !check.ok)) process.exitCode = 1;
  } finally {
    await release(subject);
  }
  if (subject?.profileDir) {
    out('\nCPU profiles (self time):');
    out(summarizeProfiles(subject.profileDir, 25, new Map(subject.stack?.processes.map((p) => [p.pid, p.name]))));
    out(`\nprofiles: ${subject.profileDir}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
