import { CpuAccount, type CpuCost } from '../src/process-stats';

/** Burns `ms` of this process's CPU time (not wall time: a busy machine stretches it, never shortens it). */
function spin(ms: number): Promise<void> {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= ms * 1000) break;
  }
  return Promise.resolve();
}

describe('CPU per request', () => {
  it('adds up the CPU of every run of a case, and charges it to the requests of all of them', async () => {
    const account = new CpuAccount([{ name: 'bench test', pid: process.pid }]);
    await account.during(() => spin(150));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await account.during(() => spin(150));
    const result = account.charge<{ ok: number; cpuPerRequest?: CpuCost[]; stealPercent?: number }>({ ok: 3 });
    const own = result.cpuPerRequest?.find((cost) => cost.name === 'bench test')?.us ?? 0;
    // 300 ms of CPU over 3 requests (the clock ticks every 10 ms); the idle pause is not counted.
    expect(own).toBeGreaterThan(85_000);
    expect(own).toBeLessThan(130_000);
    expect(result.stealPercent).toBeGreaterThanOrEqual(0);
  });
});
