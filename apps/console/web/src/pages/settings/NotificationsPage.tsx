import type { NotificationSettingsView, NotifyType } from '@modelgate/schemas/api';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FieldErrors, type Resolver, useForm, useWatch } from 'react-hook-form';
import { api } from '../../api';
import { InputField, SelectField } from '../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../components/feedback';
import { formatQuotaAsUsd } from '../../lib/money';
import { useQuotaPerUnit, useSelf } from '../../lib/queries';
import {
  NOTIFY_TYPE_LABELS,
  type NotificationFields,
  notificationBodyOfForm,
  notificationFormOf,
  type NotificationFormValues,
} from './notification-form';

const SETTINGS_KEY = ['notification-settings'];

/** Notifications: the low-balance warning (docs/api.md 3.9.6), by email or signed webhook. */
export function NotificationsPage() {
  const settings = useQuery({ queryKey: SETTINGS_KEY, queryFn: () => api.call('get /api/user/setting') });
  const self = useSelf();
  return (
    <>
      <PageHeader title="Notifications" />
      <section className="panel" aria-labelledby="balance-warning-title">
        <h2 id="balance-warning-title">Low-balance warning</h2>
        <p>
          One warning when a charge takes your balance below the threshold. You are warned again only after a top-up has brought the balance back
          above it.
        </p>
        <ErrorAlert error={settings.error ?? self.error} />
        {settings.isPending || self.isPending ? (
          <Loading what="notification settings" />
        ) : settings.data && self.data ? (
          <WarningForm settings={settings.data} accountEmail={self.data.email} />
        ) : null}
      </section>
    </>
  );
}

function CurrentWarning({ settings }: { settings: NotificationSettingsView }) {
  const quotaPerUnit = useQuotaPerUnit();
  if (settings.notify_type === '' || settings.quota_warning_threshold === 0) {
    return <p><span className="badge off">Off</span> No warning is sent.</p>;
  }
  const way = settings.notify_type === 'email' ? 'by email' : 'by webhook';
  return (
    <p>
      <span className="badge ok">On</span> Warning {way} below {formatQuotaAsUsd(settings.quota_warning_threshold, quotaPerUnit)}.
    </p>
  );
}

function WarningForm({ settings, accountEmail }: { settings: NotificationSettingsView; accountEmail: string }) {
  const queryClient = useQueryClient();
  const quotaPerUnit = useQuotaPerUnit();
  const resolver: Resolver<NotificationFormValues, unknown, NotificationFields> = (values) => {
    const result = notificationBodyOfForm(values, quotaPerUnit, accountEmail, settings.webhook_secret_set);
    if (result.ok) return { values: result.body, errors: {} };
    const errors: FieldErrors<NotificationFormValues> = {};
    for (const [field, message] of Object.entries(result.errors)) errors[field as keyof NotificationFormValues] = { type: 'validate', message };
    return { values: {}, errors };
  };
  const form = useForm<NotificationFormValues, unknown, NotificationFields>({ resolver, defaultValues: notificationFormOf(settings, quotaPerUnit) });
  const save = useMutation({
    mutationFn: (body: NotificationFields) => api.call('put /api/user/setting', { body }),
    onSuccess: (saved) => {
      queryClient.setQueryData(SETTINGS_KEY, saved);
      form.reset(notificationFormOf(saved, quotaPerUnit));
    },
  });
  const submit = form.handleSubmit((body) => save.mutateAsync(body).catch(() => undefined));
  const notifyType = useWatch({ control: form.control, name: 'notifyType' });
  const { errors, isSubmitting } = form.formState;

  return (
    <>
      <CurrentWarning settings={settings} />
      {save.isSuccess && !form.formState.isDirty && <Notice>Saved.</Notice>}
      <form className="notification-form" onSubmit={(event) => void submit(event)} noValidate>
        <ErrorAlert error={save.error} />
        <div className="form-grid">
          <SelectField label="Warn me" error={errors.notifyType?.message} {...form.register('notifyType')}>
            {(Object.keys(NOTIFY_TYPE_LABELS) as NotifyType[]).map((type) => (
              <option key={type} value={type}>{NOTIFY_TYPE_LABELS[type]}</option>
            ))}
          </SelectField>
          <InputField
            label="Threshold (USD)"
            inputMode="decimal"
            placeholder="e.g. 5.00"
            hint="Warn when the balance falls below this amount."
            error={errors.thresholdUsd?.message}
            {...form.register('thresholdUsd')}
          />
        </div>
        {notifyType === 'email' && (
          <div className="form-grid">
            <InputField
              label="Email"
              type="email"
              autoComplete="email"
              placeholder={accountEmail || 'you@example.com'}
              hint={accountEmail ? `Leave empty to use your account email (${accountEmail}).` : 'Your account has no email: enter the address to warn.'}
              error={errors.email?.message}
              {...form.register('email')}
            />
          </div>
        )}
        {notifyType === 'webhook' && (
          <div className="form-grid">
            <InputField
              label="Webhook URL"
              type="url"
              inputMode="url"
              spellCheck={false}
              placeholder="https://example.com/hooks/modelgate"
              hint="An https (or http) address on the public internet; it gets a JSON POST."
              error={errors.webhookUrl?.message}
              {...form.register('webhookUrl')}
            />
            <InputField
              label="Signing secret"
              type="password"
              autoComplete="new-password"
              spellCheck={false}
              placeholder={settings.webhook_secret_set ? 'Leave empty to keep the current secret' : '8 to 256 characters'}
              hint={
                <>
                  {settings.webhook_secret_set ? <span className="badge ok">Set</span> : <span className="badge off">Not set</span>} Each POST carries{' '}
                  <code>X-Modelgate-Signature: sha256=</code> and the hex HMAC-SHA256 of the body, keyed with this secret. It is never shown again.
                </>
              }
              error={errors.webhookSecret?.message}
              {...form.register('webhookSecret')}
            />
          </div>
        )}
        <button type="submit" className="primary" disabled={isSubmitting}>Save</button>
      </form>
    </>
  );
}
