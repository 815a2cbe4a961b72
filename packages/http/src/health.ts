import { type RequestHandler, Router } from 'express';

/** Resolves when the dependency answers; rejects (or hangs past the deadline) when it does not. */
export type HealthCheck = () => Promise<unknown>;

/**
 * What a service checks. Readiness (`/readyz`, the load balancer's signal) depends only on the
 * `required` checks, what the service cannot work without: a dependency whose outage it survives,
 * degraded, is `reported` in the detailed view and never takes the service out of rotation.
 */
export interface HealthChecks {
  required?: Record<string, HealthCheck>;
  reported?: Record<string, HealthCheck>;
}

export interface HealthOptions {
  /** Deadline of each check: a hung dependency counts as down, it never hangs the probe. Default 2 s. */
  timeoutMs?: number;
  /** Serve `GET /health` (the detailed view) next to the probes. Default true. */
  detailed?: boolean;
}

export interface CheckResult {
  status: 'ok' | 'down';
  required: boolean;
  /** How long the check took (the deadline when it timed out), in milliseconds. */
  latency_ms: number;
}

/** `GET /health`: every check; `degraded` when ready but a reported dependency is down. */
export interface HealthReport {
  status: 'ok' | 'degraded' | 'unavailable';
  checks: Record<string, CheckResult>;
}

const DEFAULT_TIMEOUT_MS = 2_000;

async function runCheck(check: HealthCheck, required: boolean, timeoutMs: number): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let status: CheckResult['status'] = 'ok';
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
  } catch {
    status = 'down';
  } finally {
    clearTimeout(timer);
  }
  return { status, required, latency_ms: Math.round((performance.now() - started) * 10) / 10 };
}

async function runChecks(checks: Record<string, HealthCheck>, required: boolean, timeoutMs: number): Promise<[string, CheckResult][]> {
  return Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await runCheck(check, required, timeoutMs)] as [string, CheckResult]));
}

/** Runs every check at once (required and reported), each under the deadline. */
export async function healthReport(checks: HealthChecks, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<HealthReport> {
  const results = (await Promise.all([
    runChecks(checks.required ?? {}, true, timeoutMs),
    runChecks(checks.reported ?? {}, false, timeoutMs),
  ])).flat();
  const ready = results.every(([, result]) => !result.required || result.status === 'ok');
  const degraded = results.some(([, result]) => result.status === 'down');
  return { status: ready ? (degraded ? 'degraded' : 'ok') : 'unavailable', checks: Object.fromEntries(results) };
}

/** The detailed view as a handler: 200 while ready (even degraded), 503 when a required check is down. */
export function healthDetailHandler(checks: HealthChecks, timeoutMs = DEFAULT_TIMEOUT_MS): RequestHandler {
  return async (_req, res) => {
    const report = await healthReport(checks, timeoutMs);
    res.status(report.status === 'unavailable' ? 503 : 200).json(report);
  };
}

/**
 * `GET /healthz` (process up), `GET /readyz` (every required check passes, else 503; reported ones
 * are not even run) and, unless `detailed: false`, `GET /health` (see healthDetailHandler).
 */
export function healthRouter(checks: HealthChecks, options: HealthOptions = {}): Router {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await runChecks(checks.required ?? {}, true, timeoutMs);
    const ready = results.every(([, result]) => result.status === 'ok');
    const report = Object.fromEntries(results.map(([name, result]) => [name, result.status]));
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', checks: report });
  });
  if (options.detailed !== false) router.get('/health', healthDetailHandler(checks, timeoutMs));
  return router;
}
