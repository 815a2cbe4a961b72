import type { OperationResult } from '@modelgate/client';
import type { ChannelView } from '@modelgate/schemas/api';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../../api';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { Pagination } from '../../../components/Pagination';
import { formatQuotaAsUsd } from '../../../lib/money';
import { useQuotaPerUnit } from '../../../lib/queries';
import { formatDateTime } from '../../../lib/time';
import { CHANNEL_STATUS } from '@modelgate/schemas/domain';
import { channelStatusOf, channelTypeLabel } from './channel-form';
import { ChannelForm } from './ChannelForm';

const PAGE_SIZE = 20;

type Editing = { mode: 'closed' } | { mode: 'create' } | { mode: 'edit'; channel: ChannelView };

/** A channel test's answer, and which channel it was. */
type TestOutcome = { name: string } & OperationResult<'get /api/channel/test/:id'>;

/** Upstream accounts (docs/api.md 2.4, 3.3): list, create, edit, test, enable or disable, batch delete. */
export function ChannelsPage() {
  const queryClient = useQueryClient();
  const quotaPerUnit = useQuotaPerUnit();
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [editing, setEditing] = useState<Editing>({ mode: 'closed' });
  const [notice, setNotice] = useState<string>();
  const [testOutcome, setTestOutcome] = useState<TestOutcome>();
  const channels = useQuery({
    queryKey: ['channels', page],
    queryFn: () => api.call('get /api/channel', { query: { p: String(page), page_size: String(PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });
  const items = channels.data?.items ?? [];
  // Mutations refresh the list before they report, so a notice never sits beside stale rows.
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['channels'] });

  const test = useMutation({
    mutationFn: async (channel: ChannelView) => ({
      name: channel.name,
      ...(await api.call('get /api/channel/test/:id', { params: { id: String(channel.id) } }).finally(refresh)),
    }),
    onMutate: () => setTestOutcome(undefined),
    onSuccess: setTestOutcome,
  });
  const setStatus = useMutation({
    mutationFn: ({ channel, status }: { channel: ChannelView; status: typeof CHANNEL_STATUS.enabled | typeof CHANNEL_STATUS.manuallyDisabled }) =>
      api.call('put /api/channel', { body: { id: channel.id, status } }).finally(refresh),
    onSuccess: (channel) => setNotice(`Channel ${channel.name} is ${channelStatusOf(channel.status).label.toLowerCase()}.`),
  });
  const batchDelete = useMutation({
    mutationFn: (ids: number[]) => api.call('post /api/channel/batch', { body: { ids } }).finally(refresh),
    onSuccess: (deleted, ids) => {
      setSelected(new Set());
      // A page emptied by the delete shows the one before it.
      if (ids.length >= items.length && page > 1) setPage(page - 1);
      setNotice(`Deleted ${deleted} channel${deleted === 1 ? '' : 's'}.`);
    },
  });

  const allSelected = items.length > 0 && items.every((channel) => selected.has(channel.id));

  function toggle(id: number, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  }
  function toggleAll(on: boolean) {
    setSelected(on ? new Set(items.map((channel) => channel.id)) : new Set());
  }
  function deleteSelected() {
    const ids = [...selected];
    if (window.confirm(`Delete ${ids.length} channel${ids.length === 1 ? '' : 's'}? This cannot be undone.`)) batchDelete.mutate(ids);
  }
  function changePage(next: number) {
    setPage(next);
    setSelected(new Set());
  }
  function saved(channel: ChannelView) {
    setNotice(editing.mode === 'create' ? `Channel ${channel.name} created.` : `Channel ${channel.name} saved.`);
    setEditing({ mode: 'closed' });
  }

  return (
    <>
      <PageHeader title="Channels">
        <button type="button" className="primary" onClick={() => { setNotice(undefined); setEditing({ mode: 'create' }); }} disabled={editing.mode === 'create'}>
          Add channel
        </button>
      </PageHeader>
      <p className="muted">
        A channel is one upstream account: its type, key and base URL, the models it serves and the user groups it serves them to. Calls go to the
        enabled channels of the highest priority, shared by weight.
      </p>
      {editing.mode !== 'closed' && (
        <ChannelForm
          key={editing.mode === 'edit' ? editing.channel.id : 'new'}
          channel={editing.mode === 'edit' ? editing.channel : undefined}
          onSaved={saved}
          onCancel={() => setEditing({ mode: 'closed' })}
        />
      )}
      {notice && <Notice>{notice}</Notice>}
      <ErrorAlert error={test.error ?? setStatus.error ?? batchDelete.error} />
      {testOutcome && <TestResult outcome={testOutcome} />}
      <div className="row selection-bar">
        <button type="button" className="danger" onClick={deleteSelected} disabled={selected.size === 0 || batchDelete.isPending}>Delete selected</button>
        <span className="muted" aria-live="polite">{selected.size === 0 ? 'Select channels to delete them together.' : `${selected.size} selected`}</span>
      </div>
      {channels.isError ? (
        <ErrorAlert error={channels.error} />
      ) : channels.isPending ? (
        <Loading what="channels" />
      ) : (
        <>
          <div className="table-wrap">
            <table className="admin-table">
              <thead>
                <tr>
                  <th scope="col">
                    <input type="checkbox" aria-label="Select all channels on this page" checked={allSelected} disabled={items.length === 0} onChange={(event) => toggleAll(event.target.checked)} />
                  </th>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col">Models</th>
                  <th scope="col" className="num">Priority</th>
                  <th scope="col" className="num">Weight</th>
                  <th scope="col" className="num">Response time</th>
                  <th scope="col" className="num">Used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {items.length === 0 && (
                  <tr>
                    <td colSpan={10} className="muted">No channels yet. Add one with “Add channel”: an upstream account, its key and the models it serves.</td>
                  </tr>
                )}
                {items.map((channel) => {
                  const status = channelStatusOf(channel.status);
                  const enabled = channel.status === CHANNEL_STATUS.enabled;
                  return (
                    <tr key={channel.id}>
                      <td><input type="checkbox" aria-label={`Select ${channel.name}`} checked={selected.has(channel.id)} onChange={(event) => toggle(channel.id, event.target.checked)} /></td>
                      <th scope="row">{channel.name}</th>
                      <td>{channelTypeLabel(channel.type)}</td>
                      <td className="wrap status-cell">
                        <span className={`badge ${status.tone}`}>{status.label}</span>
                        {channel.status === CHANNEL_STATUS.autoDisabled && channel.status_reason && <div className="muted cell-note">{channel.status_reason}</div>}
                      </td>
                      <td className="wrap models-cell">{channel.models.split(',').join(', ')}</td>
                      <td className="num">{channel.priority}</td>
                      <td className="num">{channel.weight}</td>
                      <td className="num" title={channel.tested_at === null ? undefined : `Tested ${formatDateTime(channel.tested_at)}`}>
                        {channel.tested_at === null ? <span className="muted">Not tested</span> : `${channel.response_time_ms} ms`}
                      </td>
                      <td className="num">{formatQuotaAsUsd(channel.used_quota, quotaPerUnit)}</td>
                      <td className="actions-cell">
                        <div className="row-actions">
                          <button type="button" aria-label={`Edit ${channel.name}`} onClick={() => { setNotice(undefined); setEditing({ mode: 'edit', channel }); }}>Edit</button>
                          <button type="button" aria-label={`Test ${channel.name}`} onClick={() => test.mutate(channel)} disabled={test.isPending}>
                            {test.isPending && test.variables.id === channel.id ? 'Testing…' : 'Test'}
                          </button>
                          <button
                            type="button"
                            aria-label={`${enabled ? 'Disable' : 'Enable'} ${channel.name}`}
                            onClick={() => setStatus.mutate({ channel, status: enabled ? CHANNEL_STATUS.manuallyDisabled : CHANNEL_STATUS.enabled })}
                            disabled={setStatus.isPending}
                          >
                            {enabled ? 'Disable' : 'Enable'}
                          </button>
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pagination page={page} pageSize={PAGE_SIZE} total={channels.data.total} onPage={changePage} label="Channels" />
        </>
      )}
    </>
  );
}

function TestResult({ outcome }: { outcome: TestOutcome }) {
  if (outcome.success) return <Notice>Test of {outcome.name} succeeded in {outcome.time_ms} ms.</Notice>;
  return <p className="alert error" role="alert">Test of {outcome.name} failed after {outcome.time_ms} ms: {outcome.message}</p>;
}
