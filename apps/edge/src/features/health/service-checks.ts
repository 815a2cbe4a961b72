import type { ReadinessCheck } from '@modelgate/http';

/** The service behind `target` is ready when its `/healthz` answers 2xx within the deadline. */
export function serviceHealthCheck(target: URL, timeoutMs: number): ReadinessCheck {
  const url = new URL(`${target.pathname.replace(/\/$/, '')}/healthz`, target.origin);
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`healthz answered ${res.status}`);
  };
}
