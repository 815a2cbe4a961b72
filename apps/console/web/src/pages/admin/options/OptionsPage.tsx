import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../../api';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { formatQuotaAsUsd } from '../../../lib/money';
import { useQuotaPerUnit, useStatus } from '../../../lib/queries';
import { ROLE_ROOT, useUser } from '../../../session/session-context';
import { useOptions } from '../options-query';
import type { OptionKey } from '@modelgate/schemas/options';
import { editableText, OPTION_FIELDS, OPTION_SECTIONS, type OptionField, optionKeysOf } from './option-fields';

/** Runtime options (docs/api.md 3.4), root only: one field per option, each saved on its own. */
export function OptionsPage() {
  const user = useUser();
  const isRoot = user.role >= ROLE_ROOT;
  const options = useOptions(isRoot);
  const stored = new Map(options.data?.map((row) => [row.key, row.value]));
  return (
    <>
      <PageHeader title="Options" />
      {!isRoot ? (
        <p className="alert error" role="alert">
          Options are root-only: sign in as the root user to see or change them. Administrators manage channels, users and payment events.
        </p>
      ) : options.isError ? (
        <ErrorAlert error={options.error} />
      ) : options.isPending ? (
        <Loading what="options" />
      ) : (
        <>
          <p className="muted">
            Each option is saved on its own and reaches every relay within a few seconds. Model prices are easier to edit on the{' '}
            <Link to="/admin/prices">Prices</Link> page.
          </p>
          {OPTION_SECTIONS.map((section) => (
            <section key={section} className="panel" aria-labelledby={`options-${section}`}>
              <h2 id={`options-${section}`}>{section}</h2>
              {section === 'Stripe top-ups' && <StripeState />}
              {optionKeysOf(section).map((key) => (
                <OptionEditor key={key} optionKey={key} field={OPTION_FIELDS[key]} stored={stored.get(key)} />
              ))}
            </section>
          ))}
        </>
      )}
    </>
  );
}

/** Secrets are never read back; /api/status says whether Stripe has all it needs. */
function StripeState() {
  const status = useStatus();
  if (!status.data) return null;
  return status.data.stripe_enabled ? (
    <p className="muted">Stripe top-ups are on: the API secret, webhook secret and price ID are all set.</p>
  ) : (
    <p className="muted">Stripe top-ups are off until StripeApiSecret, StripeWebhookSecret and StripePriceId are all set.</p>
  );
}

function OptionEditor({ optionKey, field, stored }: { optionKey: OptionKey; field: OptionField; stored: string | undefined }) {
  const id = useId();
  const queryClient = useQueryClient();
  const quotaPerUnit = useQuotaPerUnit();
  const secret = field.control === 'secret';
  // Undefined until edited: the field shows the stored value, also after a save refreshed it.
  const [text, setText] = useState<string | undefined>();
  const current = text ?? (secret ? '' : editableText(field.control, stored ?? ''));
  const save = useMutation({
    mutationFn: (value: string) => api.call('put /api/option', { body: { key: optionKey, value } }),
    onSuccess: async () => {
      setText(undefined);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: ['options'] }),
        queryClient.invalidateQueries({ queryKey: ['status'] }),
        queryClient.invalidateQueries({ queryKey: ['pricing'] }),
      ]);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(current);
  }
  function clearSecret() {
    if (window.confirm(`Clear ${optionKey}? Stripe top-ups stop working without it.`)) save.mutate('');
  }
  function edit(value: string) {
    setText(value);
    save.reset();
  }

  const hintId = `${id}-hint`;
  const control = { id, 'aria-describedby': hintId, value: current, onChange: (event: { target: { value: string } }) => edit(event.target.value) };
  const unchanged = !secret && current === editableText(field.control, stored ?? '');
  return (
    <form className="option" onSubmit={submit} noValidate>
      <label htmlFor={id} className="mono">{optionKey}</label>
      <p className="hint" id={hintId}>
        {field.description}
        {field.control === 'quota' && /^[0-9]+$/.test(current) && ` Worth ${formatQuotaAsUsd(Number(current), quotaPerUnit)}.`}
        {secret && ' Write-only: the stored value is never shown.'}
      </p>
      <div className="option-control">
        {field.control === 'boolean' ? (
          <select {...control}>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        ) : field.control === 'ratio-map' ? (
          <textarea {...control} rows={6} spellCheck={false} wrap="off" className="mono" />
        ) : (
          <input
            {...control}
            type={secret ? 'password' : 'text'}
            inputMode={field.control === 'text' || secret ? undefined : field.control === 'decimal' ? 'decimal' : 'numeric'}
            autoComplete={secret ? 'new-password' : 'off'}
            placeholder={secret ? 'Enter a new value' : undefined}
          />
        )}
        <button type="submit" aria-label={`Save ${optionKey}`} disabled={save.isPending || unchanged || (secret && current === '')}>Save</button>
        {secret && <button type="button" className="danger" aria-label={`Clear ${optionKey}`} onClick={clearSecret} disabled={save.isPending}>Clear</button>}
      </div>
      <ErrorAlert error={save.error} />
      {save.isSuccess && <Notice>Saved {optionKey}{secret || field.control === 'ratio-map' ? '.' : `: ${stored ?? ''}`}</Notice>}
    </form>
  );
}
