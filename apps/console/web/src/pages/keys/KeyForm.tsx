import type { TokenView } from '@modelgate/schemas/api';
import { useMutation } from '@tanstack/react-query';
import { type FieldErrors, type Resolver, useForm, useWatch } from 'react-hook-form';
import { api } from '../../api';
import { CheckboxField, InputField, SelectField, TextAreaField } from '../../components/Field';
import { ErrorAlert } from '../../components/feedback';
import { useQuotaPerUnit } from '../../lib/queries';
import { nowSeconds } from '../../lib/time';
import { ROLE_ADMIN, useUser } from '../../session/session-context';
import { adminLimitErrors, type KeyFields, keyBodyOfForm, keyFormOfToken, type KeyFormErrors, type KeyFormValues, keyUpdateFields, NEW_KEY_FORM } from './key-form';
import { BUDGET_PERIOD_LABELS } from './key-limits';

/** The user whose key an admin edits (docs/api.md 3.9.3). */
export interface KeyOwner {
  username: string;
  group: string;
}

/**
 * Create a key, or edit an existing key's name and limits (`editing`); the panel takes the focus.
 * With `owner`, an admin edits that user's key: its limits then come under the admin's control.
 */
export function KeyForm({ editing, owner, onCancel, onSaved }: { editing?: TokenView; owner?: KeyOwner; onCancel: () => void; onSaved: (token: TokenView) => Promise<void> }) {
  const user = useUser();
  const quotaPerUnit = useQuotaPerUnit();
  // The owner of a key whose limits an admin set may only tighten them; admins are free on their own keys.
  const lockedBy = !owner && user.role < ROLE_ADMIN && editing?.limits_set_by_admin ? editing : undefined;
  const resolver: Resolver<KeyFormValues, unknown, KeyFields> = (values) => {
    const result = keyBodyOfForm(values, quotaPerUnit, nowSeconds());
    const problems: KeyFormErrors = result.ok ? (lockedBy ? adminLimitErrors(result.body, lockedBy) : {}) : result.errors;
    if (result.ok && Object.keys(problems).length === 0) return { values: result.body, errors: {} };
    const errors: FieldErrors<KeyFormValues> = {};
    for (const [field, message] of Object.entries(problems)) errors[field as keyof KeyFormValues] = { type: 'validate', message };
    return { values: {}, errors };
  };
  const form = useForm<KeyFormValues, unknown, KeyFields>({
    resolver,
    defaultValues: editing ? keyFormOfToken(editing, quotaPerUnit) : NEW_KEY_FORM,
  });
  const save = useMutation({
    mutationFn: (body: KeyFields) => {
      if (!editing) return api.call('post /api/token', { body });
      // PUT sets the remaining quota outright: sent only when the user changed it, else a save would
      // give back what the key spent since the form was opened.
      const { remain_quota: remainQuota, ...fields } = keyUpdateFields(body, editing);
      const quota = form.getFieldState('quotaUsd').isDirty ? { remain_quota: remainQuota } : {};
      return api.call('put /api/token', { body: { id: editing.id, ...fields, ...quota } });
    },
    onSuccess: onSaved,
  });
  const submit = form.handleSubmit((body) => save.mutateAsync(body).catch(() => undefined));
  const [unlimitedQuota, expires, modelLimitsEnabled] = useWatch({ control: form.control, name: ['unlimitedQuota', 'expires', 'modelLimitsEnabled'] });
  const { errors, isSubmitting } = form.formState;
  const title = editing ? `Edit “${editing.name}”${owner ? ` of ${owner.username}` : ''}` : 'Create a key';

  return (
    <section className="panel key-form" aria-labelledby="key-form-title" onKeyDown={(event) => { if (event.key === 'Escape') onCancel(); }}>
      <h2 id="key-form-title">{title}</h2>
      <form onSubmit={(event) => void submit(event)} noValidate>
        {lockedBy && (
          <p className="alert info">An admin set this key&apos;s rate limits and budget. You may lower them, but not raise or remove them, and the budget period stays.</p>
        )}
        {owner && (
          <p className="alert info">
            {editing?.limits_set_by_admin
              ? `An admin set this key's rate limits and budget: ${owner.username} may only lower them.`
              : `Changing the rate limits or budget puts them under admin control: ${owner.username} may then only lower them.`}
          </p>
        )}
        <ErrorAlert error={save.error} />
        <div className="form-grid">
          <InputField label="Name" autoFocus maxLength={50} hint="Where the key is used, e.g. “laptop” or “ci”." error={errors.name?.message} {...form.register('name')} />
          <InputField
            label="Group"
            hint={owner ? `Leave empty for the owner's group (${owner.group}).` : `Leave empty for your own group (${user.group}).`}
            error={errors.group?.message}
            {...form.register('group')}
          />
        </div>
        <div className="form-grid">
          <fieldset className="key-limit">
            <legend>Rate limits</legend>
            <div className="form-grid limit-grid">
              <InputField label="Requests per minute" type="number" inputMode="numeric" min={0} step={1} hint="0 = none" error={errors.rpmLimit?.message} {...form.register('rpmLimit')} />
              <InputField label="Tokens per minute" type="number" inputMode="numeric" min={0} step={1} hint="Prompt + completion; 0 = none" error={errors.tpmLimit?.message} {...form.register('tpmLimit')} />
              <InputField label="Requests at once" type="number" inputMode="numeric" min={0} step={1} hint="0 = none" error={errors.maxConcurrency?.message} {...form.register('maxConcurrency')} />
            </div>
          </fieldset>
          <fieldset className="key-limit">
            <legend>Spending budget</legend>
            <div className="form-grid limit-grid">
              <InputField
                label="Budget (USD)"
                type="number"
                inputMode="decimal"
                min={0}
                step="any"
                hint="Empty = none. Calls past it are refused until the next period."
                error={errors.budgetUsd?.message}
                {...form.register('budgetUsd')}
              />
              {lockedBy ? (
                <div className="field">
                  <span className="field-label">Budget period</span>
                  <span>{BUDGET_PERIOD_LABELS[lockedBy.budget_period]}</span>
                  <p className="hint">Set by an admin.</p>
                </div>
              ) : (
                <SelectField label="Budget period" hint="UTC calendar periods." error={errors.budgetPeriod?.message} {...form.register('budgetPeriod')}>
                  {Object.entries(BUDGET_PERIOD_LABELS).map(([period, label]) => <option key={period} value={period}>{label}</option>)}
                </SelectField>
              )}
            </div>
          </fieldset>
        </div>
        <div className="form-grid">
          <fieldset className="key-limit">
            <legend>Quota</legend>
            <CheckboxField label="Unlimited quota" hint="The key spends from your balance without a budget of its own." {...form.register('unlimitedQuota')} />
            {!unlimitedQuota && (
              <InputField label="Remaining quota (USD)" type="number" inputMode="decimal" min={0} step="any" error={errors.quotaUsd?.message} {...form.register('quotaUsd')} />
            )}
          </fieldset>
          <fieldset className="key-limit">
            <legend>Expiry</legend>
            <CheckboxField label="Expires" hint="Without an expiry the key works until you disable or delete it." {...form.register('expires')} />
            {expires && <InputField label="Expires at" type="datetime-local" error={errors.expiresAt?.message} {...form.register('expiresAt')} />}
          </fieldset>
        </div>
        <div className="form-grid">
          <fieldset className="key-limit">
            <legend>Models</legend>
            <CheckboxField label="Limit models" hint="Allow only the models listed." {...form.register('modelLimitsEnabled')} />
            {modelLimitsEnabled && (
              <TextAreaField label="Allowed models" hint="One per line or comma-separated, e.g. gpt-4o-mini." spellCheck={false} error={errors.models?.message} {...form.register('models')} />
            )}
          </fieldset>
          <fieldset className="key-limit">
            <legend>Addresses</legend>
            <TextAreaField
              label="Allowed IP addresses"
              hint="One address or CIDR range per line, e.g. 203.0.113.0/24. Empty: any address."
              spellCheck={false}
              error={errors.allowIps?.message}
              {...form.register('allowIps')}
            />
          </fieldset>
        </div>
        <div className="row">
          <button type="submit" className="primary" disabled={isSubmitting}>{editing ? 'Save changes' : 'Create'}</button>
          <button type="button" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </section>
  );
}
