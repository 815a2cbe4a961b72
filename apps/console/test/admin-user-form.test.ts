import type { AdminUserView } from '@modelgate/schemas/api';
import { permissionsOf, userCreateBodyOf, userCreateFormSchema, userEditDefaults, userEditFormSchema, userUpdateBodyOf } from '../web/src/pages/admin/users/user-form';

const QUOTA_PER_UNIT = 500_000;

function user(fields: Partial<AdminUserView>): AdminUserView {
  return {
    id: 2,
    username: 'alice',
    display_name: 'Alice',
    role: 1,
    status: 1,
    group: 'default',
    email: '',
    quota: 123_456,
    used_quota: 0,
    request_count: 0,
    aff_code: 'abcd',
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
    inviter_id: null,
    two_factor_enabled: false,
    created_at: 1_764_000_000,
    remark: '',
    ...fields,
  };
}

describe('user forms', () => {
  test('the initial balance is typed in USD and sent as quota', () => {
    const values = userCreateFormSchema.parse({ username: 'bob_1', password: 'long enough', display_name: '', group: 'default', quota_usd: 2.5, role: 1 });
    expect(userCreateBodyOf(values, QUOTA_PER_UNIT)).toEqual({ username: 'bob_1', password: 'long enough', display_name: '', group: 'default', quota: 1_250_000, role: 1 });
    expect(userCreateFormSchema.safeParse({ ...values, role: 100 }).success).toBe(false);
    expect(userCreateFormSchema.safeParse({ ...values, quota_usd: -1 }).success).toBe(false);
  });

  test('an edit sends quota only when the USD amount changed it', () => {
    const alice = user({});
    const defaults = userEditFormSchema.parse(userEditDefaults(alice, QUOTA_PER_UNIT));
    expect(defaults.quota_usd).toBe(0.246912);
    expect(userUpdateBodyOf(alice, defaults, QUOTA_PER_UNIT, false)).toEqual({ id: 2, display_name: 'Alice', group: 'default', remark: '' });
    expect(userUpdateBodyOf(alice, { ...defaults, quota_usd: 10 }, QUOTA_PER_UNIT, false)).toMatchObject({ quota: 5_000_000 });
    expect(userUpdateBodyOf(alice, { ...defaults, quota_usd: 10 }, QUOTA_PER_UNIT, true)).toEqual({ id: 2, quota: 5_000_000 });
  });

  test('who may do what (docs/api.md 3.3)', () => {
    const root = { id: 1, role: 100 };
    const admin = { id: 3, role: 10 };
    expect(permissionsOf(root, user({}))).toEqual({ edit: true, quotaOnly: false, actions: ['disable', 'promote', 'delete'], keys: true });
    expect(permissionsOf(root, user({ role: 10, status: 2 }))).toEqual({ edit: true, quotaOnly: false, actions: ['enable', 'demote', 'delete'], keys: true });
    expect(permissionsOf(admin, user({}))).toEqual({ edit: true, quotaOnly: false, actions: ['disable', 'delete'], keys: true });
    expect(permissionsOf(admin, user({ id: 4, role: 10 }))).toEqual({ edit: false, quotaOnly: true, actions: [], keys: false });
    expect(permissionsOf(root, user({ id: 1, role: 100 }))).toEqual({ edit: true, quotaOnly: true, actions: [], keys: false });
    expect(permissionsOf(admin, user({ id: 3, role: 10 }))).toEqual({ edit: false, quotaOnly: true, actions: [], keys: false });
  });
});
