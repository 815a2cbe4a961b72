import { TOKEN_STATUS } from '@modelgate/schemas/domain';
import type { TokenView } from '@modelgate/schemas/api';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../components/feedback';
import { Pagination } from '../../components/Pagination';
import { KeyForm } from './KeyForm';
import { KeyTable } from './KeyTable';
import { keyUsageSnippet } from './key-form';

const PAGE_SIZE = 10;

type Editor = { mode: 'create' } | { mode: 'edit'; token: TokenView };

/** API keys: the list, create (the full key shown once), edit limits, enable or disable, delete. */
export function KeysPage() {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [editor, setEditor] = useState<Editor>();
  const [created, setCreated] = useState<TokenView>();
  const [notice, setNotice] = useState('');
  const createButton = useRef<HTMLButtonElement>(null);

  const keys = useQuery({
    queryKey: ['tokens', page],
    queryFn: () => api.call('get /api/token', { query: { p: String(page), page_size: String(PAGE_SIZE) } }),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['tokens'] });

  const setStatus = useMutation({
    mutationFn: (token: TokenView) =>
      api.call('put /api/token', { body: { id: token.id, status: token.status === TOKEN_STATUS.disabled ? TOKEN_STATUS.enabled : TOKEN_STATUS.disabled } }),
    // The notice comes with the refreshed list, so the two never disagree.
    onSuccess: async (token) => {
      await refresh();
      setNotice(`Key “${token.name}” is ${token.status === TOKEN_STATUS.disabled ? 'disabled' : 'enabled'}.`);
    },
  });
  const remove = useMutation({
    mutationFn: (token: TokenView) => api.call('delete /api/token/:id', { params: { id: String(token.id) } }).then(() => token),
    onSuccess: async (token) => {
      // The last key of a later page is gone: show the page before.
      if (keys.data && keys.data.items.length === 1 && page > 1) setPage(page - 1);
      await refresh();
      setNotice(`Key “${token.name}” deleted.`);
    },
  });

  function openEditor(next: Editor) {
    setNotice('');
    setCreated(undefined);
    setEditor(next);
  }
  function closeEditor() {
    setEditor(undefined);
    createButton.current?.focus();
  }
  function confirmDelete(token: TokenView) {
    if (window.confirm(`Delete the key “${token.name}”? Programs using it stop working at once.`)) remove.mutate(token);
  }

  return (
    <>
      <PageHeader title="API keys">
        <button type="button" className="primary" ref={createButton} onClick={() => openEditor({ mode: 'create' })} disabled={editor?.mode === 'create'}>
          Create key
        </button>
      </PageHeader>
      <p className="muted">Programs use a key to call the gateway&apos;s OpenAI, Anthropic and Gemini compatible API. See the <Link to="/quick-start">Quick start</Link> for examples.</p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorAlert error={setStatus.error ?? remove.error} />
      {editor && (
        <KeyForm
          key={editor.mode === 'edit' ? editor.token.id : 'create'}
          editing={editor.mode === 'edit' ? editor.token : undefined}
          onCancel={closeEditor}
          onSaved={async (token) => {
            if (editor.mode === 'create') {
              setEditor(undefined);
              setCreated(token);
              await refresh();
              return;
            }
            // The form stays (its button disabled) until the list shows the change.
            await refresh();
            setEditor(undefined);
            setNotice(`Key “${token.name}” saved.`);
            createButton.current?.focus();
          }}
        />
      )}
      {created && <NewKey token={created} onDone={() => { setCreated(undefined); createButton.current?.focus(); }} />}
      {keys.isPending ? (
        <Loading what="your keys" />
      ) : keys.isError ? (
        <ErrorAlert error={keys.error} />
      ) : keys.data.items.length === 0 ? (
        <p className="panel">No keys yet. Create one to call the gateway from your programs.</p>
      ) : (
        <>
          <KeyTable
            tokens={keys.data.items}
            label="Your API keys"
            actions={(token) => {
              const busy = (setStatus.isPending && setStatus.variables.id === token.id) || (remove.isPending && remove.variables.id === token.id);
              return (
                <div className="key-actions">
                  <button type="button" aria-label={`Edit ${token.name}`} onClick={() => openEditor({ mode: 'edit', token })} disabled={busy}>Edit</button>
                  <button type="button" aria-label={`${token.status === TOKEN_STATUS.disabled ? 'Enable' : 'Disable'} ${token.name}`} onClick={() => setStatus.mutate(token)} disabled={busy}>
                    {token.status === TOKEN_STATUS.disabled ? 'Enable' : 'Disable'}
                  </button>
                  <button type="button" className="danger" aria-label={`Delete ${token.name}`} onClick={() => confirmDelete(token)} disabled={busy}>Delete</button>
                </div>
              );
            }}
          />
          <Pagination page={page} pageSize={PAGE_SIZE} total={keys.data.total} onPage={setPage} label="API keys" />
        </>
      )}
    </>
  );
}

/** The new key, in full, this once: copy it, and a few lines to try it. */
function NewKey({ token, onDone }: { token: TokenView; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const snippet = keyUsageSnippet(`${location.origin}/v1`, token.key);
  return (
    <section className="panel new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title" ref={heading} tabIndex={-1}>Key “{token.name}” created</h2>
      <p className="alert warning">Copy the key now: it is shown only this once. If you lose it, delete the key and create a new one.</p>
      <div className="secret-line">
        <output aria-label="New key" className="mono">{token.key}</output>
        <CopyButton text={token.key} label="Copy key" />
      </div>
      <h3>Use it</h3>
      <p className="muted">Any OpenAI-compatible tool works with these two settings; this lists the models the key can use:</p>
      <pre aria-label="Example commands"><code>{snippet}</code></pre>
      <div className="row">
        <CopyButton text={snippet} label="Copy commands" />
        <button type="button" onClick={onDone}>Done</button>
      </div>
    </section>
  );
}
