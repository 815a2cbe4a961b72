import type { TokenView } from '@modelgate/schemas/api';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { api } from '../../api';
import { ErrorAlert, Loading, Notice } from '../../components/feedback';
import { Pagination } from '../../components/Pagination';
import { KeyForm } from './KeyForm';
import { KeyTable } from './KeyTable';

const PAGE_SIZE = 10;

/**
 * An admin's view of a lower-role user's API keys (docs/api.md 3.9.3), edited with the owner's own
 * key form; the panel takes the focus when it opens.
 */
export function UserKeys({ user, onClose }: { user: { id: number; username: string; group: string }; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<TokenView>();
  const [notice, setNotice] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const keys = useQuery({
    queryKey: ['tokens', 'user', user.id, page],
    queryFn: () => api.call('get /api/token', { query: { user_id: String(user.id), p: String(page), page_size: String(PAGE_SIZE) } }),
  });

  return (
    <section className="panel user-keys" aria-labelledby="user-keys-title" onKeyDown={(event) => { if (event.key === 'Escape' && !editing) onClose(); }}>
      <div className="panel-header">
        <h2 id="user-keys-title" ref={heading} tabIndex={-1}>API keys of {user.username}</h2>
        <button type="button" onClick={onClose}>Close</button>
      </div>
      <p className="muted">Rate limits and budgets you set here are yours to control: {user.username} may lower them, not raise or remove them.</p>
      {notice && <Notice>{notice}</Notice>}
      {editing && (
        <KeyForm
          key={editing.id}
          editing={editing}
          owner={user}
          onCancel={() => setEditing(undefined)}
          onSaved={async (token) => {
            // The form stays (its button disabled) until the list shows the change.
            await queryClient.invalidateQueries({ queryKey: ['tokens'] });
            setEditing(undefined);
            setNotice(`Key “${token.name}” of ${user.username} saved.`);
          }}
        />
      )}
      {keys.isPending ? (
        <Loading what={`the keys of ${user.username}`} />
      ) : keys.isError ? (
        <ErrorAlert error={keys.error} />
      ) : keys.data.items.length === 0 ? (
        <p>{user.username} has no API keys.</p>
      ) : (
        <>
          <KeyTable
            tokens={keys.data.items}
            label={`API keys of ${user.username}`}
            actions={(token) => (
              <div className="key-actions">
                <button type="button" aria-label={`Edit ${token.name}`} onClick={() => { setNotice(''); setEditing(token); }}>Edit</button>
              </div>
            )}
          />
          <Pagination page={page} pageSize={PAGE_SIZE} total={keys.data.total} onPage={setPage} label={`API keys of ${user.username}`} />
        </>
      )}
    </section>
  );
}
