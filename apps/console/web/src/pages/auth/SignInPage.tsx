import { zodResolver } from '@hookform/resolvers/zod';
import { loginBody, twoFactorCodeBody } from '@modelgate/schemas/api';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, Navigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert } from '../../components/feedback';
import { localNextPath } from '../../lib/next-path';
import { useStatus } from '../../lib/queries';
import { useSession } from '../../session/session-context';

/** Sign in: username and password, then a TOTP or backup code when two-factor is on. */
export function SignInPage() {
  const { state, signedIn } = useSession();
  const [search] = useSearchParams();
  const [secondStep, setSecondStep] = useState(false);
  if (state.status === 'signed-in') return <Navigate to={localNextPath(search.get('next'), window.location.origin)} replace />;
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="sign-in-title">
        <p className="brand">Modelgate</p>
        <h1 id="sign-in-title">{secondStep ? 'Two-factor check' : 'Sign in'}</h1>
        {secondStep ? <CodeStep onDone={signedIn} onRestart={() => setSecondStep(false)} /> : <PasswordStep onDone={signedIn} onSecondStep={() => setSecondStep(true)} />}
      </section>
    </div>
  );
}

function PasswordStep({ onDone, onSecondStep }: { onDone: (userId: number) => Promise<void>; onSecondStep: () => void }) {
  const status = useStatus();
  const form = useForm<z.input<typeof loginBody>>({ resolver: zodResolver(loginBody), defaultValues: { username: '', password: '' } });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (body) => {
    setError(undefined);
    try {
      const result = await api.call('post /api/user/login', { body });
      if ('require_2fa' in result) onSecondStep();
      else await onDone(result.id);
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <ErrorAlert error={error} />
      <InputField label="Username" autoComplete="username" autoFocus error={errors.username && 'Enter your username or email'} {...form.register('username')} />
      <InputField label="Password" type="password" autoComplete="current-password" error={errors.password && 'Enter your password'} {...form.register('password')} />
      <button type="submit" className="primary" disabled={isSubmitting}>Sign in</button>
      {status.data?.register_enabled && <p className="muted">No account yet? <Link to="/register">Create one</Link></p>}
    </form>
  );
}

function CodeStep({ onDone, onRestart }: { onDone: (userId: number) => Promise<void>; onRestart: () => void }) {
  const form = useForm<z.input<typeof twoFactorCodeBody>>({ resolver: zodResolver(twoFactorCodeBody), defaultValues: { code: '' } });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (body) => {
    setError(undefined);
    try {
      const user = await api.call('post /api/user/login/2fa', { body: { code: body.code.trim() } });
      await onDone(user.id);
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <p>Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
      <ErrorAlert error={error} />
      <InputField label="Code" autoComplete="one-time-code" autoFocus error={errors.code && 'Enter a code'} {...form.register('code')} />
      <button type="submit" className="primary" disabled={isSubmitting}>Verify</button>
      <p><button type="button" className="link" onClick={onRestart}>Start over</button></p>
    </form>
  );
}
