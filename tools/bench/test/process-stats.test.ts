import { CpuAccount, type CpuCost, withRssGrowth } from '../src/process-stats';

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

describe('RSS growth while a request runs', () => {
  it('notes how far the RSS rose above the reading before while it ran', async () => {
    const { result, rssGrowth } = await withRssGrowth([{ name: 'bench test', pid: process.pid }], async () => {
      const held = Buffer.alloc(40 * 1024 * 1024, 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return held.length;
    });
    expect(result).toBe(40 * 1024 * 1024);
    expect(rssGrowth).toHaveLength(1);
    expect(rssGrowth[0]?.mb).toBeGreaterThan(30);
  });
});
