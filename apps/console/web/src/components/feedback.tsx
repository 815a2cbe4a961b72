import type { ReactNode } from 'react';
import { errorMessage } from '../api';

/** A failed call, announced to screen readers; nothing when there is no error. */
export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  return <p className="alert error" role="alert">{errorMessage(error)}</p>;
}

/** A success or status message, announced politely. */
export function Notice({ children }: { children: ReactNode }) {
  return <p className="alert success" role="status">{children}</p>;
}

export function Loading({ what }: { what: string }) {
  return <p className="muted" role="status">Loading {what}…</p>;
}

/** A page's heading and optional actions (buttons beside the title). */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children && <div className="actions">{children}</div>}
    </header>
  );
}
