import { zodResolver } from '@hookform/resolvers/zod';
import { registerBody } from '@modelgate/schemas/api';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link, Navigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert } from '../../components/feedback';
import { useStatus } from '../../lib/queries';
import { useSession } from '../../session/session-context';

/** Create an account (an invitation's `?aff=` code filled in), then sign in with it. */
export function RegisterPage() {
  const { state, signedIn } = useSession();
  const [search] = useSearchParams();
  const status = useStatus();
  const form = useForm<z.input<typeof registerBody>>({
    resolver: zodResolver(registerBody),
    defaultValues: { username: '', password: '', email: '', aff_code: search.get('aff') ?? '' },
  });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async ({ aff_code, ...body }) => {
    setError(undefined);
    try {
      await api.call('post /api/user/register', { body: { ...body, aff_code: aff_code || undefined } });
      const login = await api.call('post /api/user/login', { body: { username: body.username, password: body.password } });
      if (!('require_2fa' in login)) await signedIn(login.id);
    } catch (err) {
      setError(err);
    }
  });
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
          <InputField label="Email (optional)" type="email" autoComplete="email" error={errors.email?.message} {...form.register('email')} />
          <InputField label="Invitation code (optional)" error={errors.aff_code?.message} {...form.register('aff_code')} />
          <button type="submit" className="primary" disabled={isSubmitting}>Create account</button>
          <p className="muted">Already registered? <Link to="/sign-in">Sign in</Link></p>
        </form>
      </section>
    </div>
  );
}
