import { zodResolver } from '@hookform/resolvers/zod';
import type { OperationResult } from '@modelgate/client';
import { twoFactorCodeBody } from '@modelgate/schemas/api';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import type { z } from 'zod';
import { api } from '../../api';
import { CopyButton } from '../../components/CopyButton';
import { InputField } from '../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../components/feedback';
import { passwordChangeForm, type PasswordChangeInput } from './password-form';

type CodeInput = z.input<typeof twoFactorCodeBody>;

/** A started setup: the secret, its otpauth:// URI and the backup codes. */
type TwoFactorSetup = OperationResult<'post /api/user/2fa/setup'>;

const STATUS_KEY = ['two-factor-status'];

/** Security: two-factor authentication (set up, backup codes, turn off) and the password. */
export function SecurityPage() {
  return (
    <>
      <PageHeader title="Security" />
      <TwoFactorPanel />
      <PasswordPanel />
    </>
  );
}

function TwoFactorPanel() {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: STATUS_KEY, queryFn: () => api.call('get /api/user/2fa/status') });
  const [setup, setSetup] = useState<TwoFactorSetup>();
  const [notice, setNotice] = useState('');
  const start = useMutation({
    mutationFn: () => api.call('post /api/user/2fa/setup', { body: {} }),
    onSuccess: (data) => {
      setNotice('');
      setSetup(data);
    },
  });
  /** After turning two-factor on or off: the new status (fetched first, so the view never shows the old one), then the message. */
  async function changed(message: string) {
    await Promise.all([queryClient.invalidateQueries({ queryKey: STATUS_KEY }), queryClient.invalidateQueries({ queryKey: ['self'] })]);
    setSetup(undefined);
    setNotice(message);
  }

  return (
    <section className="panel" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor authentication</h2>
      {notice && <Notice>{notice}</Notice>}
      {status.isPending ? (
        <Loading what="two-factor status" />
      ) : status.isError ? (
        <ErrorAlert error={status.error} />
      ) : (
        <>
          {status.data.locked && (
            <p className="alert error" role="alert">Too many wrong codes: code checks are locked for a while. Try again later.</p>
          )}
          {status.data.enabled ? (
            <TwoFactorOn backupCodesLeft={status.data.backup_codes_remaining} onDisabled={() => changed('Two-factor authentication is off.')} />
          ) : setup ? (
            <TwoFactorSetupSteps setup={setup} onEnabled={() => changed('Two-factor authentication is on. You will be asked for a code when you sign in.')} onCancel={() => setSetup(undefined)} />
          ) : (
            <>
              <p>
                <span className="badge off">Off</span> Signing in needs only your password. With two-factor authentication it also needs a code from an
                authenticator app on your phone.
              </p>
              <ErrorAlert error={start.error} />
              <button type="button" className="primary" onClick={() => start.mutate()} disabled={start.isPending}>Set up two-factor authentication</button>
            </>
          )}
        </>
      )}
    </section>
  );
}

/** Scan (or type) the secret, keep the backup codes, confirm with a first code. */
function TwoFactorSetupSteps({ setup, onEnabled, onCancel }: { setup: TwoFactorSetup; onEnabled: () => Promise<void>; onCancel: () => void }) {
  const qrCode = useQuery({
    queryKey: ['two-factor-qr', setup.qr_code_data],
    queryFn: () => QRCode.toDataURL(setup.qr_code_data, { margin: 1, width: 200 }),
    staleTime: Infinity,
    gcTime: 0,
  });
  return (
    <div className="two-factor-setup">
      <ol className="steps">
        <li>
          <h3>Scan the QR code</h3>
          <p>Use an authenticator app (for example Google Authenticator, 1Password or Aegis). If you cannot scan, enter the secret instead.</p>
          <div className="qr">
            {qrCode.data ? <img src={qrCode.data} width={200} height={200} alt="QR code for your authenticator app" /> : <Loading what="the QR code" />}
          </div>
          <div className="secret-line">
            <span className="secret-label" id="two-factor-secret-label">Secret</span>
            <output aria-labelledby="two-factor-secret-label" className="mono">{setup.secret}</output>
            <CopyButton text={setup.secret} label="Copy secret" />
          </div>
        </li>
        <li>
          <h3>Save your backup codes</h3>
          <BackupCodes codes={setup.backup_codes} />
        </li>
        <li>
          <h3>Enter a code from the app</h3>
          <CodeForm
            label="Code"
            hint="The 6-digit code the app shows now."
            submit="Enable"
            send={(code) => api.call('post /api/user/2fa/enable', { body: { code } })}
            onDone={onEnabled}
          />
        </li>
      </ol>
      <button type="button" onClick={onCancel}>Cancel setup</button>
    </div>
  );
}

/** Two-factor is on: fresh backup codes, or turn it off. */
function TwoFactorOn({ backupCodesLeft, onDisabled }: { backupCodesLeft: number; onDisabled: () => Promise<void> }) {
  const queryClient = useQueryClient();
  const [newCodes, setNewCodes] = useState<string[]>();
  return (
    <>
      <p>
        <span className="badge ok">On</span> Signing in needs your password and a code from your authenticator app.{' '}
        {backupCodesLeft === 1 ? '1 backup code left.' : `${backupCodesLeft} backup codes left.`}
      </p>
      <h3>Backup codes</h3>
      {newCodes ? (
        <>
          <BackupCodes codes={newCodes} />
          <button type="button" onClick={() => setNewCodes(undefined)}>I have saved them</button>
        </>
      ) : (
        <CodeForm
          label="Code for new backup codes"
          hint="A 6-digit code from your app. The new codes replace all the old ones."
          submit="Regenerate backup codes"
          send={(code) => api.call('post /api/user/2fa/backup_codes', { body: { code } })}
          onDone={async (result) => {
            await queryClient.invalidateQueries({ queryKey: STATUS_KEY });
            setNewCodes(result.backup_codes);
          }}
        />
      )}
      <h3>Turn off</h3>
      <CodeForm
        label="Code to disable"
        hint="A code from your app, or one of your backup codes."
        submit="Disable two-factor authentication"
        danger
        confirm="Turn off two-factor authentication? Signing in will need only your password."
        send={(code) => api.call('post /api/user/2fa/disable', { body: { code } })}
        onDone={onDisabled}
      />
    </>
  );
}

/** Backup codes, shown once: a list to copy, with the warning that they will not be shown again. */
function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <>
      <p className="alert warning">
        Keep these backup codes somewhere safe. Each one signs you in once if you lose your phone. They are shown only now.
      </p>
      <ul className="backup-codes mono" aria-label="Backup codes">
        {codes.map((code) => <li key={code}>{code}</li>)}
      </ul>
      <CopyButton text={codes.join('\n')} label="Copy backup codes" />
    </>
  );
}

interface CodeFormProps<Result> {
  /** The field's accessible name: distinct while more than one code field is on screen. */
  label: string;
  hint: string;
  submit: string;
  danger?: boolean;
  /** Asked with window.confirm before sending. */
  confirm?: string;
  send: (code: string) => Promise<Result>;
  /** Awaited before the form counts as done (the button stays disabled meanwhile). */
  onDone: (result: Result) => Promise<void>;
}

/** One TOTP (or backup) code and a button that sends it. */
function CodeForm<Result>({ label, hint, submit, danger, confirm, send, onDone }: CodeFormProps<Result>) {
  const form = useForm<CodeInput>({ resolver: zodResolver(twoFactorCodeBody), defaultValues: { code: '' } });
  const mutation = useMutation({ mutationFn: send, onSuccess: onDone });
  const onSubmit = form.handleSubmit(async ({ code }) => {
    if (confirm && !window.confirm(confirm)) return;
    await mutation.mutateAsync(code.trim()).then(() => form.reset(), () => undefined);
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form className="code-form" onSubmit={(event) => void onSubmit(event)} noValidate>
      <ErrorAlert error={mutation.error} />
      <InputField label={label} hint={hint} autoComplete="one-time-code" spellCheck={false} error={errors.code && 'Enter a code'} {...form.register('code')} />
      <button type="submit" className={danger ? 'danger' : 'primary'} disabled={isSubmitting}>{submit}</button>
    </form>
  );
}

/** Change the password: the current one, and the new one twice. */
function PasswordPanel() {
  const queryClient = useQueryClient();
  const form = useForm<PasswordChangeInput, unknown, z.output<typeof passwordChangeForm>>({
    resolver: zodResolver(passwordChangeForm),
    defaultValues: { original_password: '', password: '', confirm_password: '' },
  });
  const change = useMutation({
    mutationFn: (body: z.output<typeof passwordChangeForm>) => api.call('put /api/user/self', { body }),
    onSuccess: (self) => {
      queryClient.setQueryData(['self'], self);
      form.reset();
    },
  });
  const onSubmit = form.handleSubmit((body) => change.mutateAsync(body).catch(() => undefined));
  const { errors, isSubmitting } = form.formState;
  return (
    <section className="panel" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      {change.isSuccess && <Notice>Password changed. Your other sessions and your access token were signed out.</Notice>}
      <form className="password-form" onSubmit={(event) => void onSubmit(event)} noValidate>
        <ErrorAlert error={change.error} />
        <InputField label="Current password" type="password" autoComplete="current-password" error={errors.original_password?.message} {...form.register('original_password')} />
        <InputField label="New password" type="password" autoComplete="new-password" hint="8 to 64 characters." error={errors.password && 'Use 8 to 64 characters'} {...form.register('password')} />
        <InputField label="Confirm new password" type="password" autoComplete="new-password" error={errors.confirm_password?.message} {...form.register('confirm_password')} />
        <button type="submit" className="primary" disabled={isSubmitting}>Change password</button>
      </form>
    </section>
  );
}
