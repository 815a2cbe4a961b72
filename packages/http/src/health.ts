import { Router } from 'express';

export type ReadinessCheck = () => Promise<unknown>;

/** Runs a check with a deadline: a hung dependency must fail readiness, not hang it. */
async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<'ok' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

/** `GET /healthz` (process up) and `GET /readyz` (every dependency reachable, else 503). */
export function healthRouter(checks: Record<string, ReadinessCheck>, timeoutMs = 2000): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const names = Object.keys(checks);
    const results = await Promise.all(names.map((name) => runCheck(checks[name], timeoutMs)));
    const report = Object.fromEntries(names.map((name, i) => [name, results[i]]));
    const ready = results.every((r) => r === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: report });
  });
  return router;
}
