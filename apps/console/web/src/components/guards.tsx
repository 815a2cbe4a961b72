import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { ROLE_ADMIN, useSession } from '../session/session-context';
import { useStatus } from '../lib/queries';
import { ErrorAlert, Loading } from './feedback';

/** Pages for signed-in users: others go to Sign in, and come back here afterwards. */
export function RequireSession({ children }: { children: ReactNode }) {
  const { state } = useSession();
  const location = useLocation();
  // The pages convert money with /api/status's quota_per_unit: they wait for it too.
  const status = useStatus();
  if (state.status === 'loading') return <Loading what="your session" />;
  if (state.status === 'signed-out') {
    const next = location.pathname + location.search;
    return <Navigate to={next === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(next)}`} replace />;
  }
  if (status.isError) return <ErrorAlert error={status.error} />;
  if (!status.data) return <Loading what="the gateway's settings" />;
  return children;
}

/** Admin pages: a plain user who follows a link here is told so instead of seeing failing calls. */
export function RequireAdmin({ children }: { children: ReactNode }) {
  const { state } = useSession();
  if (state.status !== 'signed-in' || state.user.role < ROLE_ADMIN) {
    return <p className="alert error" role="alert">This page is for administrators.</p>;
  }
  return children;
}
