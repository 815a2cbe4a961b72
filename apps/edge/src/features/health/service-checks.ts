import type { HealthCheck } from '@modelgate/http';

/** The service behind `target` is up and ready when its `/readyz` answers 2xx within the deadline. */
export function serviceHealthCheck(target: URL, timeoutMs: number): HealthCheck {
  const url = new URL(`${target.pathname.replace(/\/$/, '')}/readyz`, target.origin);
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`readyz answered ${res.status}`);
  };
}
