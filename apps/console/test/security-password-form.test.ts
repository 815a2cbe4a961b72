import { passwordChangeForm } from '../web/src/pages/security/password-form';

describe('password change form', () => {
  it('sends the current and the new password', () => {
    expect(passwordChangeForm.parse({ original_password: 'old', password: 'new-password-1', confirm_password: 'new-password-1' })).toEqual({
      original_password: 'old',
      password: 'new-password-1',
    });
  });

  it('needs the current password and the new one typed twice the same', () => {
    const result = passwordChangeForm.safeParse({ original_password: '', password: 'new-password-1', confirm_password: 'new-password-2' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['original_password', 'Enter your current password'],
      ['confirm_password', 'The new passwords do not match'],
    ]);
  });

  it('applies the API\'s password rules', () => {
    const result = passwordChangeForm.safeParse({ original_password: 'old', password: 'short', confirm_password: 'short' });
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['password']);
  });
});
