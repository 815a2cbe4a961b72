import { selfUpdateBody } from '@modelgate/schemas/api';
import { z } from 'zod';

/** The password change form: PUT /api/user/self's two password fields, plus the new one typed twice. */
export const passwordChangeForm = selfUpdateBody
  .pick({ original_password: true, password: true })
  .required()
  .extend({ confirm_password: z.string() })
  .superRefine((values, ctx) => {
    if (!values.original_password) ctx.addIssue({ code: 'custom', path: ['original_password'], message: 'Enter your current password' });
    if (values.password !== values.confirm_password) ctx.addIssue({ code: 'custom', path: ['confirm_password'], message: 'The new passwords do not match' });
  })
  .transform(({ original_password, password }) => ({ original_password, password }));

export type PasswordChangeInput = z.input<typeof passwordChangeForm>;
