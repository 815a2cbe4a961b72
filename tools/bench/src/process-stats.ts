import { readdirSync, readFileSync } from 'node:fs';

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status), or undefined when it is gone. */
export function rssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** The process and its descendants (worker processes, if any), parents first. */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    try {
      const children = readFileSync(`/proc/${tree[i]}/task/${tree[i]}/children`, 'utf8').trim();
      if (children) tree.push(...children.split(/\s+/).map(Number));
    } catch {
      // exited meanwhile
    }
  }
  return tree;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, 10 ms resolution). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name, which may itself contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU time so far of every process whose command name is `name` (e.g. all postgres backends), in ms. */
export function cpuMsOfCommand(name: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) total += cpuMs(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** The machine's CPU time so far, in clock ticks: all of it, and what the hypervisor gave other guests (steal). */
function machineTicks(): { total: number; steal: number } {
  const [cpuLine = ''] = readFileSync('/proc/stat', 'utf8').split('\n', 1);
  const fields = cpuLine.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  return { total: fields.slice(0, 8).reduce((sum, value) => sum + value, 0), steal: fields[7] ?? 0 };
}

/** CPU microseconds one process spent per successful request of a case. */
export interface CpuCost {
  name: string;
  us: number;
}

export interface WatchedProcess {
  name: string;
  pid: number;
}

/** CPU time so far of each process (with its workers), this load generator and the shared servers. */
function cpuSnapshot(processes: WatchedProcess[]): Map<string, number> {
  const snapshot = new Map<string, number>();
  for (const watched of processes) snapshot.set(watched.name, processTree(watched.pid).reduce((sum, pid) => sum + cpuMs(pid), 0));
  const own = process.cpuUsage();
  snapshot.set('load generator', (own.user + own.system) / 1000);
  // Shared servers: their CPU includes whatever else uses them meanwhile (marked with *).
  snapshot.set('redis-server*', cpuMsOfCommand('redis-server'));
  snapshot.set('postgres*', cpuMsOfCommand('postgres'));
  return snapshot;
}

/**
 * The CPU each process spends during the runs of one case (one run, or slices of it taken in turns
 * with other cases), and the share of the machine's CPU time the hypervisor gave to other guests
 * meanwhile (steal): on a shared host it varies from 0 to 40% within minutes, and every figure with it.
 */
export class CpuAccount {
  private readonly spentMs = new Map<string, number>();
  private ticks = 0;
  private stealTicks = 0;

  constructor(private readonly processes: WatchedProcess[]) {}

  async during<T>(run: () => Promise<T>): Promise<T> {
    const before = cpuSnapshot(this.processes);
    const machineBefore = machineTicks();
    const result = await run();
    const after = cpuSnapshot(this.processes);
    const machineAfter = machineTicks();
    for (const [name, ms] of after) this.spentMs.set(name, (this.spentMs.get(name) ?? 0) + ms - (before.get(name) ?? 0));
    this.ticks += machineAfter.total - machineBefore.total;
    this.stealTicks += machineAfter.steal - machineBefore.steal;
    return result;
  }

  /**
   * Notes on a result, per process, the microseconds of CPU spent per successful request (relay 250,
   * edge 100, ...): where the cores went, which latency alone does not tell.
   */
  charge<T extends { ok: number; cpuPerRequest?: CpuCost[]; stealPercent?: number }>(result: T): T {
    if (this.ticks > 0) result.stealPercent = (100 * this.stealTicks) / this.ticks;
    if (result.ok > 0) {
      result.cpuPerRequest = [...this.spentMs]
        .map(([name, ms]) => ({ name, us: (ms * 1000) / result.ok }))
        .filter((entry) => entry.us >= 1);
    }
    return result;
  }
}

/** Runs a case and notes its CPU cost per request by process (see `CpuAccount`). */
export async function withCpuCost<T extends { ok: number; cpuPerRequest?: CpuCost[]; stealPercent?: number }>(
  processes: WatchedProcess[],
  run: () => Promise<T>,
): Promise<T> {
  const account = new CpuAccount(processes);
  return account.charge(await account.during(run));
}

/** RSS of each process and of its workers, if any. */
export function readRss(processes: WatchedProcess[]): { name: string; mb: number | undefined }[] {
  const readings: { name: string; mb: number | undefined }[] = [];
  for (const watched of processes) {
    processTree(watched.pid).forEach((pid, index) => {
      readings.push({ name: index === 0 ? watched.name : `${watched.name} worker ${index}`, mb: rssMb(pid) });
    });
  }
  return readings;
}

/** How much a process's RSS rose while something ran: its peak minus its reading just before, in MB. */
export interface RssGrowth {
  name: string;
  mb: number;
}

/** Often enough to catch a peak that lasts as long as a buffer is held (a read of /proc costs microseconds). */
const RSS_SAMPLE_MS = 5;

/**
 * Runs `run` while sampling each process's RSS (VmRSS, as `rssMb`) every few milliseconds, and
 * notes on its result how far each rose above its reading just before: what one request (a large
 * upload) holds resident, not what the process keeps afterwards.
 */
export async function withRssGrowth<T>(processes: WatchedProcess[], run: () => Promise<T>): Promise<{ result: T; rssGrowth: RssGrowth[] }> {
  const before = processes.map((watched) => rssMb(watched.pid));
  const peak = [...before];
  const sample = () =>
    processes.forEach((watched, index) => {
      const mb = rssMb(watched.pid);
      if (mb !== undefined && mb > (peak[index] ?? 0)) peak[index] = mb;
    });
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  try {
    const result = await run();
    sample();
    const rssGrowth = processes.flatMap((watched, index) => {
      const start = before[index];
      const top = peak[index];
      return start === undefined || top === undefined ? [] : [{ name: watched.name, mb: top - start }];
    });
    return { result, rssGrowth };
  } finally {
    clearInterval(timer);
  }
}
