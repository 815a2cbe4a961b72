import { PAYMENT_EVENT_STATUSES, type PaymentEventReplayView, type PaymentEventView } from '@modelgate/schemas/api';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../../api';
import { SelectField } from '../../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { Pagination } from '../../../components/Pagination';
import { formatDateTime } from '../../../lib/time';

const PAGE_SIZE = 20;

type EventStatus = (typeof PAYMENT_EVENT_STATUSES)[number];

/** Only these can be queued again (docs/api.md 3.3); processed and ignored events answer 409. */
const REPLAYABLE: ReadonlySet<string> = new Set<EventStatus>(['received', 'failed']);

const STATUS_TONES: Record<EventStatus, string> = { received: '', processed: 'ok', ignored: '', failed: 'off' };

const QUEUE_OUTCOMES: Record<PaymentEventReplayView['queue'], string> = {
  queued: 'queued again',
  requeued: 'queued again',
  'already-queued': 'already waiting in the queue',
};

/** The Stripe webhook inbox (docs/api.md 3.3, 3.5): every event received, what became of it, replay. */
export function PaymentsPage() {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<EventStatus | ''>('');
  const events = useQuery({
    queryKey: ['payment-events', status, page],
    queryFn: () => api.call('get /api/payment/events', { query: { status: status || undefined, p: String(page), page_size: String(PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });
  const replay = useMutation({
    mutationFn: (event: PaymentEventView) =>
      api.call('post /api/payment/events/:id/replay', { params: { id: String(event.id) }, body: {} }).finally(() => queryClient.invalidateQueries({ queryKey: ['payment-events'] })),
  });
  function confirmReplay(event: PaymentEventView) {
    if (window.confirm(`Replay ${event.event_id}? The worker processes it again; a top-up is never credited twice.`)) replay.mutate(event);
  }

  return (
    <>
      <PageHeader title="Payment events" />
      <p className="muted">
        Every Stripe webhook event the gateway received, newest first. The worker credits paid top-ups; an event that failed can be replayed once
        its cause is fixed.
      </p>
      <div className="row">
        <SelectField
          label="Status"
          value={status}
          onChange={(event) => {
            setStatus(event.target.value as EventStatus | '');
            setPage(1);
          }}
        >
          <option value="">All</option>
          {PAYMENT_EVENT_STATUSES.map((value) => <option key={value} value={value}>{value}</option>)}
        </SelectField>
      </div>
      {replay.isSuccess && (
        <Notice>
          Event {replay.data.event_id} is {QUEUE_OUTCOMES[replay.data.queue]} (status {replay.data.status}, attempt {replay.data.attempts}).
        </Notice>
      )}
      <ErrorAlert error={replay.error} />
      {events.isError ? (
        <ErrorAlert error={events.error} />
      ) : events.isPending ? (
        <Loading what="payment events" />
      ) : (
        <>
          <div className="table-wrap">
            <table className="admin-table">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col">Top-up</th>
                  <th scope="col">Received / processed</th>
                  <th scope="col">Error</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {events.data.items.length === 0 && (
                  <tr>
                    <td colSpan={6} className="muted">
                      {status ? `No ${status} events.` : 'No payment events yet. They arrive when Stripe calls /api/stripe/webhook.'}
                    </td>
                  </tr>
                )}
                {events.data.items.map((event) => (
                  <tr key={event.id}>
                    <th scope="row">
                      <span className="mono">{event.event_id}</span>
                      <div className="muted cell-note mono">{event.type}</div>
                    </th>
                    <td>
                      <span className={`badge ${STATUS_TONES[event.status as EventStatus] ?? ''}`}>{event.status}</span>
                      <div className="muted cell-note">{event.attempts} attempt{event.attempts === 1 ? '' : 's'}</div>
                    </td>
                    <td className="mono">{event.trade_no ?? '—'}</td>
                    <td>
                      {formatDateTime(event.received_at)}
                      <div className="muted cell-note">{event.processed_at === null ? 'Not processed' : formatDateTime(event.processed_at)}</div>
                    </td>
                    <td className="wrap error-cell">{event.last_error ?? ''}</td>
                    <td>
                      {REPLAYABLE.has(event.status) ? (
                        <button type="button" aria-label={`Replay ${event.event_id}`} onClick={() => confirmReplay(event)} disabled={replay.isPending}>Replay</button>
                      ) : (
                        <span className="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination page={page} pageSize={PAGE_SIZE} total={events.data.total} onPage={setPage} label="Payment events" />
        </>
      )}
    </>
  );
}
