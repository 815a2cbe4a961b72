import { zodResolver } from '@hookform/resolvers/zod';
import { loginBody, twoFactorCodeBody } from '@modelgate/schemas/api';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, Navigate, useLocation, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert, Notice } from '../../components/feedback';
import { localNextPath } from '../../lib/next-path';
import { useStatus } from '../../lib/queries';
import { useSession } from '../../session/session-context';
import { ssoErrorMessage } from './sso-errors';

/**
 * Sign in: username and password (or single sign-on), then a TOTP or backup code when two-factor is
 * on. Single sign-on comes back here as `?step=2fa` for the code, or as `/login?error=<code>`.
 */
export function SignInPage() {
  const { state, signedIn } = useSession();
  const [search, setSearch] = useSearchParams();
  const [secondStep, setSecondStep] = useState(search.get('step') === '2fa');
  const next = localNextPath(search.get('next'), window.location.origin);
  if (state.status === 'signed-in') return <Navigate to={next} replace />;
  const restart = () => {
    setSecondStep(false);
    setSearch((params) => {
      params.delete('step');
      return params;
    }, { replace: true });
  };
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="sign-in-title">
        <p className="brand">Modelgate</p>
        <h1 id="sign-in-title">{secondStep ? 'Two-factor check' : 'Sign in'}</h1>
        {secondStep ? (
          <CodeStep onDone={signedIn} onRestart={restart} />
        ) : (
          <PasswordStep onDone={signedIn} onSecondStep={() => setSecondStep(true)} next={next} ssoError={ssoErrorMessage(search.get('error'))} />
        )}
      </section>
    </div>
  );
}

function PasswordStep({ onDone, onSecondStep, next, ssoError }: { onDone: (userId: number) => Promise<void>; onSecondStep: () => void; next: string; ssoError?: string }) {
  const status = useStatus();
  // Set by the page that sent us here, such as the password reset.
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
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
      {ssoError && !error && <p className="alert error" role="alert">{ssoError}</p>}
      {notice && !error && <Notice>{notice}</Notice>}
      <ErrorAlert error={error} />
      <InputField label="Username" autoComplete="username" autoFocus error={errors.username && 'Enter your username or email'} {...form.register('username')} />
      <InputField label="Password" type="password" autoComplete="current-password" error={errors.password && 'Enter your password'} {...form.register('password')} />
      <button type="submit" className="primary" disabled={isSubmitting}>Sign in</button>
      {status.data?.oidc_enabled && (
        <>
          <p className="auth-or" aria-hidden="true">or</p>
          {/* A plain navigation: the gateway redirects to the identity provider, which comes back to the gateway. */}
          <a className="sso-link" href={`/api/oauth/oidc/login?next=${encodeURIComponent(next)}`}>Sign in with SSO</a>
        </>
      )}
      {status.data?.register_enabled && <p className="muted">No account yet? <Link to="/register">Create one</Link></p>}
      {status.data?.smtp_enabled && <p className="muted"><Link to="/forgot-password">Forgot password?</Link></p>}
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
