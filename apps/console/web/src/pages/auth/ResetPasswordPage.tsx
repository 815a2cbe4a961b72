import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert } from '../../components/feedback';
import { useSession } from '../../session/session-context';
import { type NewPasswordInput, newPasswordForm } from './password-reset-form';

/** What the sign-in page says after a reset (router state, so a reload does not repeat it). */
export const PASSWORD_RESET_NOTICE = 'Your password was changed, and every session of your account ended. Sign in with the new password.';

/** The page a reset mail links to (`/reset?email=...&token=...`): a new password, typed twice. */
export function ResetPasswordPage() {
  const [search] = useSearchParams();
  const email = search.get('email') ?? '';
  const token = search.get('token') ?? '';
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="reset-title">
        <p className="brand">Modelgate</p>
        <h1 id="reset-title">Choose a new password</h1>
        {email && token ? (
          <NewPasswordForm email={email} token={token} />
        ) : (
          <p className="alert error" role="alert">This link is incomplete. Open the whole link from the mail, or <Link to="/forgot-password">ask for a new one</Link>.</p>
        )}
        <p className="muted"><Link to="/sign-in">Back to sign in</Link></p>
      </section>
    </div>
  );
}

function NewPasswordForm({ email, token }: { email: string; token: string }) {
  const navigate = useNavigate();
  const { expired } = useSession();
  const form = useForm<NewPasswordInput, unknown, z.output<typeof newPasswordForm>>({ resolver: zodResolver(newPasswordForm), defaultValues: { password: '', confirm_password: '' } });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async ({ password }) => {
    setError(undefined);
    try {
      await api.call('post /api/user/reset', { body: { email, token, password } });
      // Any session this browser had ended with the reset.
      expired();
      await navigate('/sign-in', { replace: true, state: { notice: PASSWORD_RESET_NOTICE } });
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <p>For the account with the address <strong>{email}</strong>.</p>
      <ErrorAlert error={error} />
      {Boolean(error) && <p className="muted"><Link to="/forgot-password">Ask for a new link</Link></p>}
      <InputField label="New password" type="password" autoComplete="new-password" autoFocus hint="8 to 64 characters" error={errors.password?.message} {...form.register('password')} />
      <InputField label="New password again" type="password" autoComplete="new-password" error={errors.confirm_password?.message} {...form.register('confirm_password')} />
      <button type="submit" className="primary" disabled={isSubmitting}>Set password</button>
    </form>
  );
}
