import type { AccountDeps } from '../deps';

/** Current time in ms, from the injected clock when there is one. */
export function nowMs(deps: AccountDeps): number {
  return deps.now ? deps.now() : Date.now();
}

export function unixSeconds(date: Date | null | undefined): number | null {
  return date ? Math.floor(date.getTime() / 1000) : null;
}
