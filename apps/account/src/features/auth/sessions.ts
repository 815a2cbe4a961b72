import type { AccountDeps } from '../../deps';
import { nowMs } from '../../lib/clock';
import { SessionStore } from './session-store';

const stores = new WeakMap<AccountDeps, SessionStore>();

/** One session store per app instance, built from its env and Redis client. */
export function sessionStoreOf(deps: AccountDeps): SessionStore {
  let store = stores.get(deps);
  if (!store) {
    store = new SessionStore(deps.redis, {
      prefix: deps.env.REDIS_PREFIX,
      secret: deps.env.SESSION_SECRET,
      secureCookie: deps.env.COOKIE_SECURE,
      now: () => nowMs(deps),
    });
    stores.set(deps, store);
  }
  return store;
}
