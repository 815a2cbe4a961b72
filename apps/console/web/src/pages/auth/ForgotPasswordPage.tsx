import { zodResolver } from '@hookform/resolvers/zod';
import { passwordResetRequestBody } from '@modelgate/schemas/api';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Link } from 'react-router';
import type { z } from 'zod';
import { api } from '../../api';
import { InputField } from '../../components/Field';
import { ErrorAlert, Notice } from '../../components/feedback';

/**
 * Asks for a reset link by email. The answer is the same whether or not an account has the address,
 * so the page says only that a link is on its way if one does.
 */
export function ForgotPasswordPage() {
  const form = useForm<z.input<typeof passwordResetRequestBody>>({ resolver: zodResolver(passwordResetRequestBody), defaultValues: { email: '' } });
  const [sentTo, setSentTo] = useState<string>();
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (body) => {
    setError(undefined);
    try {
      await api.call('post /api/user/reset_password', { body });
      setSentTo(body.email);
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <div className="auth-page">
      <section className="auth-card" aria-labelledby="forgot-title">
        <p className="brand">Modelgate</p>
        <h1 id="forgot-title">Forgot your password?</h1>
        {sentTo ? (
          <>
            <Notice>If an account has the address {sentTo}, a link to choose a new password is on its way. It works for 15 minutes.</Notice>
            <p className="muted">No mail after a few minutes? Check the spam folder, or <button type="button" className="link" onClick={() => setSentTo(undefined)}>try another address</button>.</p>
          </>
        ) : (
          <form onSubmit={(event) => void submit(event)} noValidate>
            <p>Enter the email address of your account, and we mail you a link to choose a new password.</p>
            <ErrorAlert error={error} />
            <InputField label="Email" type="email" autoComplete="email" autoFocus error={errors.email && 'Enter an email address'} {...form.register('email')} />
            <button type="submit" className="primary" disabled={isSubmitting}>Send link</button>
          </form>
        )}
        <p className="muted"><Link to="/sign-in">Back to sign in</Link></p>
      </section>
    </div>
  );
}
