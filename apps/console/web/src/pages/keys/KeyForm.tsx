import type { TokenView } from '@modelgate/schemas/api';
import { useMutation } from '@tanstack/react-query';
import { type FieldErrors, type Resolver, useForm, useWatch } from 'react-hook-form';
import { api } from '../../api';
import { CheckboxField, InputField, TextAreaField } from '../../components/Field';
import { ErrorAlert } from '../../components/feedback';
import { useQuotaPerUnit } from '../../lib/queries';
import { nowSeconds } from '../../lib/time';
import { useUser } from '../../session/session-context';
import { type KeyFields, keyBodyOfForm, keyFormOfToken, type KeyFormValues, NEW_KEY_FORM } from './key-form';

/** Create a key, or edit an existing key's name and limits (`editing`); the panel takes the focus. */
export function KeyForm({ editing, onCancel, onSaved }: { editing?: TokenView; onCancel: () => void; onSaved: (token: TokenView) => Promise<void> }) {
  const user = useUser();
  const quotaPerUnit = useQuotaPerUnit();
  const resolver: Resolver<KeyFormValues, unknown, KeyFields> = (values) => {
    const result = keyBodyOfForm(values, quotaPerUnit, nowSeconds());
    if (result.ok) return { values: result.body, errors: {} };
    const errors: FieldErrors<KeyFormValues> = {};
    for (const [field, message] of Object.entries(result.errors)) errors[field as keyof KeyFormValues] = { type: 'validate', message };
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
      const { remain_quota: remainQuota, ...unchangedBudget } = body;
      const budget = form.getFieldState('quotaUsd').isDirty ? { remain_quota: remainQuota } : {};
      return api.call('put /api/token', { body: { id: editing.id, ...unchangedBudget, ...budget } });
    },
    onSuccess: onSaved,
  });
  const submit = form.handleSubmit((body) => save.mutateAsync(body).catch(() => undefined));
  const [unlimitedQuota, expires, modelLimitsEnabled] = useWatch({ control: form.control, name: ['unlimitedQuota', 'expires', 'modelLimitsEnabled'] });
  const { errors, isSubmitting } = form.formState;
  const title = editing ? `Edit “${editing.name}”` : 'Create a key';

  return (
    <section className="panel key-form" aria-labelledby="key-form-title" onKeyDown={(event) => { if (event.key === 'Escape') onCancel(); }}>
      <h2 id="key-form-title">{title}</h2>
      <form onSubmit={(event) => void submit(event)} noValidate>
        <ErrorAlert error={save.error} />
        <div className="form-grid">
          <InputField label="Name" autoFocus maxLength={50} hint="Where the key is used, e.g. “laptop” or “ci”." error={errors.name?.message} {...form.register('name')} />
          <InputField label="Group" hint={`Leave empty for your own group (${user.group}).`} error={errors.group?.message} {...form.register('group')} />
        </div>
        <div className="form-grid">
          <fieldset className="key-limit">
            <legend>Budget</legend>
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
