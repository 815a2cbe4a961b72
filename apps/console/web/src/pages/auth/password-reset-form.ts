import { passwordResetBody, registerBody } from '@modelgate/schemas/api';
import { z } from 'zod';

/** The reset page's form: the new password typed twice (the email and token come from the link). */
export const newPasswordForm = passwordResetBody
  .pick({ password: true })
  .extend({ confirm_password: z.string() })
  .superRefine((values, ctx) => {
    if (values.password !== values.confirm_password) ctx.addIssue({ code: 'custom', path: ['confirm_password'], message: 'The passwords do not match' });
  })
  .transform(({ password }) => ({ password }));

export type NewPasswordInput = z.input<typeof newPasswordForm>;

const SIX_DIGITS = /^[0-9]{6}$/;

/**
 * The registration form; while the gateway verifies emails (status `email_verification`), the email
 * and the 6-digit code mailed to it are required too.
 */
export function registrationForm(emailVerification: boolean) {
  return registerBody.superRefine((values, ctx) => {
    if (!emailVerification) return;
    if (!values.email) ctx.addIssue({ code: 'custom', path: ['email'], message: 'Enter your email: the code is mailed there' });
    if (!SIX_DIGITS.test(values.verification_code?.trim() ?? '')) {
      ctx.addIssue({ code: 'custom', path: ['verification_code'], message: 'Enter the 6-digit code from the mail' });
    }
  });
}
