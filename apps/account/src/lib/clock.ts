import type { AccountDeps } from '../deps';

/** Current time in ms, from the injected clock when there is one. */
export function nowMs(deps: AccountDeps): number {
  return deps.now ? deps.now() : Date.now();
}

/** Unix seconds of a time; `null` where there is none (docs/api.md 1.1). */
export function unixSeconds(date: Date): number;
export function unixSeconds(date: Date | null | undefined): number | null;
export function unixSeconds(date: Date | null | undefined): number | null {
  return date ? Math.floor(date.getTime() / 1000) : null;
}
