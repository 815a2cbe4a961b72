import { zodResolver } from '@hookform/resolvers/zod';
import { REDEMPTION_NEVER_EXPIRES, REDEMPTION_STATUS, type RedemptionView } from '@modelgate/schemas/api';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { api } from '../../../api';
import { CopyButton } from '../../../components/CopyButton';
import { CheckboxField, InputField } from '../../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { Pagination } from '../../../components/Pagination';
import { formatInteger, formatQuotaAsUsd } from '../../../lib/money';
import { useQuotaPerUnit } from '../../../lib/queries';
import { formatDateTime, nowSeconds } from '../../../lib/time';
import {
  codesFileName,
  codesFileText,
  NEW_REDEMPTION_FORM,
  redemptionBodyOf,
  type RedemptionFormInput,
  type RedemptionFormOutput,
  redemptionFormSchema,
  redemptionStatusBadge,
  valueHint,
} from './redemption-form';

const PAGE_SIZE = 20;

/** The statuses an admin sets; used (3) comes only from a redemption. */
type SettableStatus = typeof REDEMPTION_STATUS.enabled | typeof REDEMPTION_STATUS.disabled;

interface CreatedBatch {
  name: string;
  quota: number;
  codes: string[];
}

/** Redemption codes (docs/api.md 3.9.5): make a batch (the codes shown this once), list, disable or enable, delete. */
export function RedemptionsPage() {
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedBatch>();
  const [notice, setNotice] = useState<string>();
  const [page, setPage] = useState(1);
  const [keyword, setKeyword] = useState('');
  const createButton = useRef<HTMLButtonElement>(null);
  const filter = keyword.trim();
  const codes = useQuery({
    queryKey: ['redemptions', filter, page],
    queryFn: () => api.call('get /api/redemption', { query: { keyword: filter || undefined, p: String(page), page_size: String(PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['redemptions'] });

  const setStatus = useMutation({
    mutationFn: ({ code, status }: { code: RedemptionView; status: SettableStatus }) => api.call('put /api/redemption', { body: { id: code.id, status } }),
    // The notice comes with the refreshed list, so the two never disagree.
    onSuccess: async (code) => {
      await refresh();
      setNotice(`Code ${code.key} (“${code.name}”) is ${code.status === REDEMPTION_STATUS.disabled ? 'disabled' : 'enabled'}.`);
    },
  });
  const remove = useMutation({
    mutationFn: (code: RedemptionView) => api.call('delete /api/redemption/:id', { params: { id: String(code.id) } }).then(() => code),
    onSuccess: async (code) => {
      // The last code of a later page is gone: show the page before.
      if (codes.data?.items.length === 1 && page > 1) setPage(page - 1);
      await refresh();
      setNotice(`Code ${code.key} (“${code.name}”) deleted.`);
    },
  });
  function confirmDelete(code: RedemptionView) {
    const effect = code.status === REDEMPTION_STATUS.used ? 'Its top-up stays in the user’s history.' : 'Nobody can redeem it afterwards.';
    if (window.confirm(`Delete the code ${code.key} (“${code.name}”)? ${effect}`)) remove.mutate(code);
  }
  function openForm() {
    setNotice(undefined);
    setCreated(undefined);
    setCreating(true);
  }

  return (
    <>
      <PageHeader title="Redemption codes">
        <button type="button" className="primary" ref={createButton} onClick={openForm} disabled={creating}>Create codes</button>
      </PageHeader>
      <p className="muted">
        A code adds its value to the balance of the first user who redeems it on their Wallet page, once. The gateway keeps only a fingerprint of
        each code: copy or download a new batch when it is shown.
      </p>
      {creating && (
        <CreateCodesForm
          onCancel={() => {
            setCreating(false);
            createButton.current?.focus();
          }}
          onCreated={async (batch) => {
            setCreating(false);
            setCreated(batch);
            setPage(1);
            await refresh();
          }}
        />
      )}
      {created && (
        <NewCodes
          batch={created}
          onDone={() => {
            setCreated(undefined);
            createButton.current?.focus();
          }}
        />
      )}
      {notice && <Notice>{notice}</Notice>}
      <ErrorAlert error={setStatus.error ?? remove.error} />
      <div className="row">
        <InputField
          label="Filter by name"
          type="search"
          maxLength={50}
          value={keyword}
          onChange={(event) => {
            setKeyword(event.target.value);
            setPage(1);
          }}
        />
      </div>
      {codes.isError ? (
        <ErrorAlert error={codes.error} />
      ) : codes.isPending ? (
        <Loading what="redemption codes" />
      ) : (
        <>
          <CodesTable
            codes={codes.data.items}
            filtered={filter !== ''}
            busyId={setStatus.isPending ? setStatus.variables.code.id : remove.isPending ? remove.variables.id : undefined}
            onStatus={(code, status) => {
              setNotice(undefined);
              setStatus.mutate({ code, status });
            }}
            onDelete={confirmDelete}
          />
          <Pagination page={page} pageSize={PAGE_SIZE} total={codes.data.total} onPage={setPage} label="Redemption codes" />
        </>
      )}
    </>
  );
}

interface CodesTableProps {
  codes: RedemptionView[];
  filtered: boolean;
  busyId?: number;
  onStatus: (code: RedemptionView, status: SettableStatus) => void;
  onDelete: (code: RedemptionView) => void;
}

function CodesTable({ codes, filtered, busyId, onStatus, onDelete }: CodesTableProps) {
  const quotaPerUnit = useQuotaPerUnit();
  const now = nowSeconds();
  return (
    <div className="table-wrap">
      <table className="admin-table stacked-table" aria-label="Redemption codes">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Code</th>
            <th scope="col" className="num">Value</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Redeemed</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {codes.length === 0 && (
            <tr>
              <td colSpan={8} className="muted">{filtered ? 'No code has a name matching the filter.' : 'No redemption codes yet. Create a batch above.'}</td>
            </tr>
          )}
          {codes.map((code) => {
            const badge = redemptionStatusBadge(code, now);
            const used = code.status === REDEMPTION_STATUS.used;
            const disabled = code.status === REDEMPTION_STATUS.disabled;
            return (
              <tr key={code.id}>
                <th scope="row">{code.name}</th>
                <td data-label="Code"><span className="mono">{code.key}</span></td>
                <td className="num" data-label="Value" title={`${formatInteger(code.quota)} quota`}>{formatQuotaAsUsd(code.quota, quotaPerUnit)}</td>
                <td data-label="Status"><span className={badge.className}>{badge.label}</span></td>
                <td data-label="Created">{formatDateTime(code.created_at)}</td>
                <td data-label="Expires">{code.expired_time === REDEMPTION_NEVER_EXPIRES ? 'Never' : formatDateTime(code.expired_time)}</td>
                <td data-label="Redeemed">
                  {code.redeemed_at === null ? <span className="muted">—</span> : <>{formatDateTime(code.redeemed_at)}<div className="muted cell-note">by user #{code.redeemed_by}</div></>}
                </td>
                <td className="actions-cell">
                  <div className="row-actions">
                    {!used && (
                      <button
                        type="button"
                        aria-label={`${disabled ? 'Enable' : 'Disable'} ${code.key} (${code.name})`}
                        onClick={() => onStatus(code, disabled ? REDEMPTION_STATUS.enabled : REDEMPTION_STATUS.disabled)}
                        disabled={busyId === code.id}
                      >
                        {disabled ? 'Enable' : 'Disable'}
                      </button>
                    )}
                    <button type="button" className="danger" aria-label={`Delete ${code.key} (${code.name})`} onClick={() => onDelete(code)} disabled={busyId === code.id}>
                      Delete
                    </button>
                  </div>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function CreateCodesForm({ onCancel, onCreated }: { onCancel: () => void; onCreated: (batch: CreatedBatch) => Promise<void> }) {
  const quotaPerUnit = useQuotaPerUnit();
  const schema = useMemo(() => redemptionFormSchema(quotaPerUnit, nowSeconds), [quotaPerUnit]);
  const form = useForm<RedemptionFormInput, unknown, RedemptionFormOutput>({ resolver: zodResolver(schema), defaultValues: NEW_REDEMPTION_FORM });
  const [valueUsd, expires] = useWatch({ control: form.control, name: ['value_usd', 'expires'] });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (values) => {
    setError(undefined);
    const body = redemptionBodyOf(values, quotaPerUnit);
    try {
      const codes = await api.call('post /api/redemption', { body });
      await onCreated({ name: body.name, quota: body.quota, codes });
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;

  return (
    <section className="panel" aria-labelledby="create-codes-title" onKeyDown={(event) => { if (event.key === 'Escape') onCancel(); }}>
      <h2 id="create-codes-title">Create redemption codes</h2>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <ErrorAlert error={error} />
        <div className="form-grid">
          <InputField label="Name" autoFocus autoComplete="off" maxLength={50} hint="For telling batches apart, e.g. “spring promo”." error={errors.name?.message} {...form.register('name')} />
          <InputField
            label="Value of each code (USD)"
            type="number"
            inputMode="decimal"
            min={0}
            step="any"
            hint={valueHint(valueUsd, quotaPerUnit)}
            error={errors.value_usd?.message}
            {...form.register('value_usd', { valueAsNumber: true })}
          />
          <InputField label="Number of codes" type="number" inputMode="numeric" min={1} max={100} step={1} hint="1 to 100" error={errors.count?.message} {...form.register('count', { valueAsNumber: true })} />
        </div>
        <div className="form-grid">
          <div>
            <CheckboxField label="Expires" hint="Without an expiry a code can be redeemed until it is used, disabled or deleted." {...form.register('expires')} />
            {expires && <InputField label="Expires at" type="datetime-local" error={errors.expires_at?.message} {...form.register('expires_at')} />}
          </div>
        </div>
        <div className="row">
          <button type="submit" className="primary" disabled={isSubmitting}>{isSubmitting ? 'Creating…' : 'Create codes'}</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </section>
  );
}

/** A new batch, this once: copy all, download as text, then done. */
function NewCodes({ batch, onDone }: { batch: CreatedBatch; onDone: () => void }) {
  const quotaPerUnit = useQuotaPerUnit();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const text = codesFileText(batch.codes);
  function download() {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = codesFileName(batch.name);
    link.click();
    URL.revokeObjectURL(url);
  }
  const count = batch.codes.length;
  return (
    <section className="panel new-key" aria-labelledby="new-codes-title">
      <h2 id="new-codes-title" ref={heading} tabIndex={-1}>
        {count === 1 ? 'Code' : `${count} codes`} “{batch.name}” created, {formatQuotaAsUsd(batch.quota, quotaPerUnit)} each
      </h2>
      <p className="alert warning">Copy or download the codes now: they are shown only this once. A lost code can only be deleted and made again.</p>
      <ol className="redemption-codes mono" aria-label="New codes">
        {batch.codes.map((code) => <li key={code}>{code}</li>)}
      </ol>
      <div className="row">
        <CopyButton text={text} label="Copy all" />
        <button type="button" onClick={download}>Download .txt</button>
        <button type="button" onClick={onDone}>Done</button>
      </div>
    </section>
  );
}
