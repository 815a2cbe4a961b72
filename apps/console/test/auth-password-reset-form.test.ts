import { newPasswordForm, registrationForm } from '../web/src/pages/auth/password-reset-form';

const issues = (result: { error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  result.error?.issues.map((issue) => [issue.path.join('.'), issue.message]);

describe('new password form (reset page)', () => {
  it('sends the new password once it was typed twice the same', () => {
    expect(newPasswordForm.parse({ password: 'new-password-1', confirm_password: 'new-password-1' })).toEqual({ password: 'new-password-1' });
    expect(issues(newPasswordForm.safeParse({ password: 'new-password-1', confirm_password: 'new-password-2' }))).toEqual([
      ['confirm_password', 'The passwords do not match'],
    ]);
  });

  it('applies the API\'s password rules', () => {
    expect(issues(newPasswordForm.safeParse({ password: 'short', confirm_password: 'short' }))?.map(([path]) => path)).toEqual(['password']);
  });
});

describe('registration form', () => {
  const account = { username: 'alice', password: 'pa55word!' };

  it('needs neither email nor code unless the gateway verifies emails', () => {
    expect(registrationForm(false).safeParse(account).success).toBe(true);
  });

  it('needs the email and a 6-digit code while it does', () => {
    expect(issues(registrationForm(true).safeParse({ ...account, email: '', verification_code: '12345' }))).toEqual([
      ['email', 'Enter your email: the code is mailed there'],
      ['verification_code', 'Enter the 6-digit code from the mail'],
    ]);
    expect(registrationForm(true).safeParse({ ...account, email: 'alice@example.com', verification_code: ' 012345 ' }).success).toBe(true);
  });
});
