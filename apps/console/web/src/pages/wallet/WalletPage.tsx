import { zodResolver } from '@hookform/resolvers/zod';
import { MAX_TOPUP_UNITS, type SelfView } from '@modelgate/schemas/api';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { InputField } from '../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../components/feedback';
import { Pagination } from '../../components/Pagination';
import { balanceFigures, formatInteger, formatQuotaAsUsd, formatUsd } from '../../lib/money';
import { useQuotaPerUnit, useSelf, useStatus } from '../../lib/queries';
import { formatDateTime } from '../../lib/time';
import { StatCard } from '../dashboard/StatCard';
import { affTransferFormSchema, invitationLink, redeemFormSchema, topUpFormSchema, topUpStatusBadge } from './wallet-forms';

const HISTORY_PAGE_SIZE = 10;
/** Where Stripe's checkout sends the payer back: /wallet?checkout=success or ?checkout=cancelled. */
const CHECKOUT_RETURN_PARAM = 'checkout';
const priceFormat = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });

/** Balance, Stripe top-ups and their history, redemption codes, and the affiliate programme. */
export function WalletPage() {
  const self = useSelf();
  const quotaPerUnit = useQuotaPerUnit();
  const [search] = useSearchParams();
  const checkout = search.get(CHECKOUT_RETURN_PARAM);
  return (
    <>
      <PageHeader title="Wallet" />
      {checkout === 'success' && <Notice>Thank you: Stripe has your payment. The balance goes up as soon as Stripe confirms it, usually within seconds; Refresh the top-up history to see it.</Notice>}
      {checkout === 'cancelled' && <p className="alert info" role="status">The payment was cancelled: nothing was charged.</p>}
      <ErrorAlert error={self.error} />
      {self.data && (
        <section className="cards stat-cards" aria-label="Balance">
          <StatCard label="Balance" {...balanceFigures(self.data.quota, quotaPerUnit)} />
          <StatCard label="Used" value={formatQuotaAsUsd(self.data.used_quota, quotaPerUnit)} detail={`${formatInteger(self.data.used_quota)} quota`} />
        </section>
      )}
      <TopUpForm />
      <RedeemForm />
      <TopUpHistory />
      {self.data && <Affiliate self={self.data} />}
    </>
  );
}

function TopUpForm() {
  const status = useStatus();
  const quotaPerUnit = useQuotaPerUnit();
  const minTopUp = status.data?.min_topup ?? 1;
  const schema = useMemo(() => topUpFormSchema(minTopUp), [minTopUp]);
  const form = useForm<z.input<typeof schema>>({ resolver: zodResolver(schema), values: { amount: minTopUp } });
  const amount = useWatch({ control: form.control, name: 'amount' });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async ({ amount: units }) => {
    setError(undefined);
    try {
      const { pay_link: payLink } = await api.call('post /api/user/stripe/pay', { body: { amount: units, payment_method: 'stripe' } });
      // Stripe's hosted checkout; after paying Stripe sends the payer back to the console.
      window.location.assign(payLink);
    } catch (err) {
      setError(err);
    }
  });
  const enabled = status.data?.stripe_enabled === true;
  const { errors, isSubmitting } = form.formState;

  return (
    <section className="panel" aria-labelledby="top-up-title">
      <h2 id="top-up-title">Top up</h2>
      {status.isPending && <Loading what="payment settings" />}
      <ErrorAlert error={status.error} />
      {status.data && !enabled && (
        <p className="alert info" role="note">Top-ups are turned off: the administrator has not set up Stripe for this gateway yet. Ask them to add credit to your account.</p>
      )}
      {status.data && (
        <form className="top-up-form" onSubmit={(event) => void submit(event)} noValidate>
          <fieldset disabled={!enabled || isSubmitting}>
            <legend className="visually-hidden">Stripe top-up</legend>
            <ErrorAlert error={error} />
            <div className="form-grid">
              <InputField
                label="Amount"
                type="number"
                inputMode="numeric"
                min={minTopUp}
                max={MAX_TOPUP_UNITS}
                step={1}
                error={errors.amount?.message}
                hint={
                  Number.isInteger(amount) && amount > 0
                    ? `Adds ${formatUsd(amount)} to your balance (${formatInteger(amount * quotaPerUnit)} quota). Stripe shows the price before you pay.`
                    : `Whole units of USD 1 of balance, at least ${formatInteger(minTopUp)}.`
                }
                {...form.register('amount', { valueAsNumber: true })}
              />
            </div>
            <button type="submit" className="primary">{isSubmitting ? 'Opening Stripe…' : 'Pay with Stripe'}</button>
          </fieldset>
        </form>
      )}
    </section>
  );
}

/** A redemption code from an administrator (docs/api.md 3.9.5): its value goes to the balance at once. */
function RedeemForm() {
  const quotaPerUnit = useQuotaPerUnit();
  const queryClient = useQueryClient();
  const form = useForm<z.input<typeof redeemFormSchema>, unknown, z.output<typeof redeemFormSchema>>({ resolver: zodResolver(redeemFormSchema), defaultValues: { key: '' } });
  const redeem = useMutation({
    mutationFn: (key: string) => api.call('post /api/user/topup', { body: { key } }),
    // The notice comes with the new balance and the top-up row of the usage log.
    onSuccess: async () => {
      form.reset({ key: '' });
      await Promise.all([['self'], ['topups'], ['logs']].map((queryKey) => queryClient.invalidateQueries({ queryKey })));
    },
  });
  const submit = form.handleSubmit((values) => redeem.mutateAsync(values.key).catch(() => undefined));
  const { errors, isSubmitting } = form.formState;

  return (
    <section className="panel" aria-labelledby="redeem-title">
      <h2 id="redeem-title">Redeem a code</h2>
      <p className="muted">A redemption code from the administrator adds its value to your balance at once. Each code works once.</p>
      {redeem.isSuccess && <Notice>Added {formatQuotaAsUsd(redeem.data, quotaPerUnit)} ({formatInteger(redeem.data)} quota) to your balance.</Notice>}
      <ErrorAlert error={redeem.error} />
      <form className="redeem-form" onSubmit={(event) => void submit(event)} noValidate>
        <fieldset disabled={isSubmitting}>
          <legend className="visually-hidden">Redeem a code</legend>
          <div className="row">
            <InputField label="Redemption code" autoComplete="off" spellCheck={false} maxLength={64} error={errors.key?.message} {...form.register('key')} />
            <button type="submit" className="primary">{isSubmitting ? 'Redeeming…' : 'Redeem'}</button>
          </div>
        </fieldset>
      </form>
    </section>
  );
}

function TopUpHistory() {
  const queryClient = useQueryClient();
  const [page, setPage] = useState(1);
  const history = useQuery({
    queryKey: ['topups', page],
    queryFn: () => api.call('get /api/user/topup/self', { query: { p: String(page), page_size: String(HISTORY_PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });
  // A payment is credited when Stripe's webhook has been processed: Refresh shows it and the new balance.
  const refresh = () => void Promise.all([queryClient.invalidateQueries({ queryKey: ['topups'] }), queryClient.invalidateQueries({ queryKey: ['self'] })]);

  return (
    <section className="panel" aria-labelledby="top-up-history-title">
      <div className="panel-header">
        <h2 id="top-up-history-title">Top-up history</h2>
        <button type="button" onClick={refresh} disabled={history.isFetching}>Refresh</button>
      </div>
      <ErrorAlert error={history.error} />
      {history.isPending && <Loading what="top-ups" />}
      {history.data?.total === 0 && <p className="muted">No top-ups yet.</p>}
      {history.data && history.data.items.length > 0 && (
        <div className="table-wrap">
          <table className="stacked-table">
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col" className="num">Amount</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">Price</th>
                <th scope="col">Completed</th>
                <th scope="col">Trade no.</th>
              </tr>
            </thead>
            <tbody>
              {history.data.items.map((topUp) => {
                const badge = topUpStatusBadge(topUp.status);
                return (
                  <tr key={topUp.trade_no}>
                    <td data-label="Created">{formatDateTime(topUp.created_at)}</td>
                    <td className="num" data-label="Amount">{formatUsd(topUp.amount)}</td>
                    <td data-label="Status"><span className={badge.className}>{badge.label}</span></td>
                    <td className="num" data-label="Price">{priceFormat.format(topUp.money)}</td>
                    <td data-label="Completed">{topUp.completed_at === null ? '' : formatDateTime(topUp.completed_at)}</td>
                    <td data-label="Trade no."><span className="mono">{topUp.trade_no}</span></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {history.data && <Pagination page={page} pageSize={HISTORY_PAGE_SIZE} total={history.data.total} label="Top-up history" onPage={setPage} />}
    </section>
  );
}

function Affiliate({ self }: { self: SelfView }) {
  const quotaPerUnit = useQuotaPerUnit();
  // The code is created on first request, so it is asked for rather than read from the profile.
  const code = useQuery({ queryKey: ['aff'], queryFn: () => api.call('get /api/user/aff'), staleTime: Infinity });
  const link = code.data ? invitationLink(window.location.origin, code.data) : undefined;
  const queryClient = useQueryClient();
  // Here rather than in the form: the form goes once the rest is too little to move, the message stays.
  const transfer = useMutation({
    mutationFn: (quota: number) => api.call('post /api/user/aff_transfer', { body: { quota } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['self'] }),
  });

  return (
    <section className="panel" aria-labelledby="affiliate-title">
      <h2 id="affiliate-title">Invite friends</h2>
      <p className="muted">People who register with your invitation link are counted as invited by you; rewards for them are added to your earnings.</p>
      <ErrorAlert error={code.error} />
      {code.isPending && <Loading what="your invitation link" />}
      {link && (
        <div className="row invite-link">
          <InputField label="Invitation link" readOnly value={link} onFocus={(event) => event.currentTarget.select()} />
          <CopyButton text={link} label="Copy link" />
        </div>
      )}
      <div className="cards stat-cards affiliate-cards">
        <StatCard label="Invited users" value={formatInteger(self.aff_count)} />
        <StatCard label="Ready to transfer" value={formatQuotaAsUsd(self.aff_quota, quotaPerUnit)} detail={`${formatInteger(self.aff_quota)} quota`} />
        <StatCard label="Earned in total" value={formatQuotaAsUsd(self.aff_history_quota, quotaPerUnit)} detail={`${formatInteger(self.aff_history_quota)} quota`} />
      </div>
      <ErrorAlert error={transfer.error} />
      {transfer.isSuccess && <Notice>Moved {formatQuotaAsUsd(transfer.variables, quotaPerUnit)} to your balance.</Notice>}
      {self.aff_quota >= quotaPerUnit ? (
        <AffTransferForm affQuota={self.aff_quota} busy={transfer.isPending} onTransfer={(quota) => transfer.mutate(quota)} />
      ) : (
        <p className="muted">Earnings can be moved to your balance once they reach {formatQuotaAsUsd(quotaPerUnit, quotaPerUnit)}.</p>
      )}
    </section>
  );
}

function AffTransferForm({ affQuota, busy, onTransfer }: { affQuota: number; busy: boolean; onTransfer: (quota: number) => void }) {
  const quotaPerUnit = useQuotaPerUnit();
  const schema = useMemo(() => affTransferFormSchema(quotaPerUnit, affQuota), [quotaPerUnit, affQuota]);
  const form = useForm<z.input<typeof schema>>({ resolver: zodResolver(schema), values: { quota: affQuota } });
  const quota = useWatch({ control: form.control, name: 'quota' });
  const submit = form.handleSubmit((body) => onTransfer(body.quota));
  const { errors } = form.formState;

  return (
    <form className="transfer-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Transfer earnings">
      <div className="form-grid">
        <InputField
          label="Quota to transfer"
          type="number"
          inputMode="numeric"
          min={quotaPerUnit}
          max={affQuota}
          step={1}
          error={errors.quota?.message}
          hint={Number.isInteger(quota) && quota > 0 ? `${formatQuotaAsUsd(quota, quotaPerUnit)} of balance` : `From ${formatInteger(quotaPerUnit)} to ${formatInteger(affQuota)}`}
          {...form.register('quota', { valueAsNumber: true })}
        />
      </div>
      <button type="submit" className="primary" disabled={busy}>Transfer to balance</button>
    </form>
  );
}
