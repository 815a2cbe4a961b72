import { zodResolver } from '@hookform/resolvers/zod';
import type { registerBody } from '@modelgate/schemas/api';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, Navigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert, Notice } from '../../components/feedback';
import { useStatus } from '../../lib/queries';
import { useSession } from '../../session/session-context';
import { registrationForm } from './password-reset-form';

/**
 * Create an account (an invitation's `?aff=` code filled in), then sign in with it. While the gateway
 * verifies emails, the email is required and "Send code" mails the code the form asks for.
 */
export function RegisterPage() {
  const { state, signedIn } = useSession();
  const [search] = useSearchParams();
  const status = useStatus();
  const emailVerification = status.data?.email_verification ?? false;
  const form = useForm<z.input<typeof registerBody>>({
    resolver: zodResolver(registrationForm(emailVerification)),
    defaultValues: { username: '', password: '', email: '', verification_code: '', aff_code: search.get('aff') ?? '' },
  });
  const [error, setError] = useState<unknown>();
  const [codeSentTo, setCodeSentTo] = useState<string>();
  const [sendingCode, setSendingCode] = useState(false);
  const submit = form.handleSubmit(async ({ aff_code, verification_code, ...body }) => {
    setError(undefined);
    try {
      await api.call('post /api/user/register', {
        body: { ...body, aff_code: aff_code || undefined, verification_code: emailVerification ? verification_code?.trim() : undefined },
      });
      const login = await api.call('post /api/user/login', { body: { username: body.username, password: body.password } });
      if (!('require_2fa' in login)) await signedIn(login.id);
    } catch (err) {
      setError(err);
    }
  });
  const sendCode = async () => {
    const email = form.getValues('email')?.trim() ?? '';
    if (!email) {
      form.setError('email', { message: 'Enter your email first' });
      return;
    }
    form.clearErrors('email');
    setError(undefined);
    setSendingCode(true);
    try {
      await api.call('post /api/verification', { body: { email } });
      setCodeSentTo(email);
    } catch (err) {
      setError(err);
    } finally {
      setSendingCode(false);
    }
  };
  if (state.status === 'signed-in') return <Navigate to="/" replace />;
  const { errors, isSubmitting } = form.formState;
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="register-title">
        <p className="brand">Modelgate</p>
        <h1 id="register-title">Create an account</h1>
        {status.data && !status.data.register_enabled && <p className="alert error" role="alert">Registration is closed on this gateway.</p>}
        <form onSubmit={(event) => void submit(event)} noValidate>
          <ErrorAlert error={error} />
          <InputField label="Username" autoComplete="username" autoFocus hint="3 to 20 letters, digits or _" error={errors.username?.message} {...form.register('username')} />
          <InputField label="Password" type="password" autoComplete="new-password" hint="8 to 64 characters" error={errors.password?.message} {...form.register('password')} />
          {emailVerification ? (
            <>
              <div className="row code-request">
                <InputField label="Email" type="email" autoComplete="email" error={errors.email?.message} {...form.register('email')} />
                <button type="button" disabled={sendingCode} onClick={() => void sendCode()}>{codeSentTo ? 'Send again' : 'Send code'}</button>
              </div>
              {codeSentTo && <Notice>A code is on its way to {codeSentTo}. It works for 10 minutes.</Notice>}
              <InputField label="Verification code" inputMode="numeric" autoComplete="one-time-code" hint="The 6 digits from the mail" error={errors.verification_code?.message} {...form.register('verification_code')} />
            </>
          ) : (
            <InputField label="Email (optional)" type="email" autoComplete="email" error={errors.email?.message} {...form.register('email')} />
          )}
          <InputField label="Invitation code (optional)" error={errors.aff_code?.message} {...form.register('aff_code')} />
          <button type="submit" className="primary" disabled={isSubmitting}>Create account</button>
          <p className="muted">Already registered? <Link to="/sign-in">Sign in</Link></p>
        </form>
      </section>
    </div>
  );
}
