import type { SelfView } from '@modelgate/schemas/api';
import { createContext, useContext } from 'react';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out' }
  | { status: 'signed-in'; user: SelfView };

export interface Session {
  state: SessionState;
  /** After login (or the 2FA step): remembers the user id and loads the profile. */
  signedIn(userId: number): Promise<void>;
  /** Ends the server session (best effort) and forgets the user locally. */
  signOut(): Promise<void>;
  /** The session turned out to be gone (a 401): forget the user without calling the server. */
  expired(): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in user; only for pages behind RequireSession. */
export function useUser(): SelfView {
  const { state } = useSession();
  if (state.status !== 'signed-in') throw new Error('useUser without a signed-in user');
  return state.user;
}

export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;
