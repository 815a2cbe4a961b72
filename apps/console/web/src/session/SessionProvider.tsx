import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import type { SelfView } from '@modelgate/schemas/api';
import { api, ApiError } from '../api';
import { type Session, SessionContext, type SessionState } from './session-context';

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<SessionState>({ status: 'loading' });

  const forget = useCallback(() => {
    api.userId = undefined;
    queryClient.clear();
    setState({ status: 'signed-out' });
  }, [queryClient]);

  const show = useCallback((user: SelfView) => {
    queryClient.setQueryData(['self'], user);
    setState({ status: 'signed-in', user });
  }, [queryClient]);

  /** The profile of `userId` if the session cookie is still good; a 401/403 forgets the user. */
  const load = useCallback((userId: number) => {
    api.userId = userId;
    return api.call('get /api/user/self').then(show, (err: unknown) => {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) forget();
      // Gateway unreachable: show sign-in; the cookie is kept, so a reload resumes the session.
      else setState({ status: 'signed-out' });
    });
  }, [show, forget]);

  // The session cookie says who is signed in, whether by password or by single sign-on (whose
  // redirect the page learns nothing from): its user id is then sent as New-Api-User.
  useEffect(() => {
    api.call('get /api/user/session').then(
      (user) => load(user.id),
      // A sign-in that finished meanwhile is kept.
      () => setState((current) => (current.status === 'loading' ? { status: 'signed-out' } : current)),
    );
  }, [load]);

  const session = useMemo<Session>(() => ({
    state,
    signedIn: load,
    async signOut() {
      await api.call('post /api/user/logout').catch(() => undefined);
      forget();
    },
    expired: forget,
  }), [state, load, forget]);

  // A query or action refused with `unauthorized` means the session ended (expired, signed out
  // elsewhere): back to sign-in. A wrong code or password is `invalid_credentials`, also a 401.
  useEffect(() => {
    const endedBy = (error: unknown) => error instanceof ApiError && error.code === 'unauthorized';
    const unsubscribeQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && endedBy(event.query.state.error)) forget();
    });
    const unsubscribeMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && endedBy(event.mutation.state.error)) forget();
    });
    return () => {
      unsubscribeQueries();
      unsubscribeMutations();
    };
  }, [queryClient, forget]);

  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
