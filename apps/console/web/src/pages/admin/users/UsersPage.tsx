import { zodResolver } from '@hookform/resolvers/zod';
import type { AdminUserView, ManageAction } from '@modelgate/schemas/api';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useForm, useWatch } from 'react-hook-form';
import { api } from '../../../api';
import { InputField, SelectField } from '../../../components/Field';
import { ErrorAlert, Loading, Notice, PageHeader } from '../../../components/feedback';
import { Pagination } from '../../../components/Pagination';
import { formatInteger, formatQuotaAsUsd, usdToQuota } from '../../../lib/money';
import { useQuotaPerUnit } from '../../../lib/queries';
import { ROLE_ROOT, useUser } from '../../../session/session-context';
import { UserKeys } from '../../keys/UserKeys';
import { ROLE, USER_STATUS } from '@modelgate/schemas/domain';
import {
  MANAGE_ACTION_LABELS,
  MANAGE_ACTION_RESULTS,
  permissionsOf,
  roleLabel,
  USER_CREATE_DEFAULTS,
  userCreateBodyOf,
  type UserCreateFormInput,
  type UserCreateFormOutput,
  userCreateFormSchema,
  userEditDefaults,
  type UserEditFormInput,
  type UserEditFormOutput,
  userEditFormSchema,
  userUpdateBodyOf,
} from './user-form';

const PAGE_SIZE = 20;

type Editing = { mode: 'closed' } | { mode: 'create' } | { mode: 'edit'; user: AdminUserView } | { mode: 'keys'; user: AdminUserView };

/** Users administration (docs/api.md 3.3, 3.8): list, create, edit balance and profile, manage. */
export function UsersPage() {
  const me = useUser();
  const queryClient = useQueryClient();
  const quotaPerUnit = useQuotaPerUnit();
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<Editing>({ mode: 'closed' });
  const [notice, setNotice] = useState<string>();
  const users = useQuery({
    queryKey: ['users', page],
    queryFn: () => api.call('get /api/user', { query: { p: String(page), page_size: String(PAGE_SIZE) } }),
    placeholderData: keepPreviousData,
  });
  const refresh = async (user: { id: number }) => {
    await queryClient.invalidateQueries({ queryKey: ['users'] });
    // The signed-in user's own balance is shown elsewhere too.
    if (user.id === me.id) await queryClient.invalidateQueries({ queryKey: ['self'] });
  };

  const manage = useMutation({
    // The list is refreshed before the notice shows, so the row already says what the notice does.
    mutationFn: ({ user, action }: { user: AdminUserView; action: ManageAction }) =>
      api.call('post /api/user/manage', { body: { id: user.id, action } }).finally(() => refresh(user)),
    onSuccess: (_result, { user, action }) => {
      // Deleting the only user on a later page shows the page before it.
      if (action === 'delete' && users.data?.items.length === 1 && page > 1) setPage(page - 1);
      setNotice(`${user.username} ${MANAGE_ACTION_RESULTS[action]}.`);
    },
  });
  function act(user: AdminUserView, action: ManageAction) {
    if (action === 'delete' && !window.confirm(`Delete ${user.username}? The account is disabled and hidden; its usage history stays.`)) return;
    setNotice(undefined);
    manage.mutate({ user, action });
  }
  async function saved(user: AdminUserView, message: string) {
    await refresh(user);
    setNotice(message);
    setEditing({ mode: 'closed' });
  }

  return (
    <>
      <PageHeader title="Users">
        <button type="button" className="primary" onClick={() => { setNotice(undefined); setEditing({ mode: 'create' }); }} disabled={editing.mode === 'create'}>
          Add user
        </button>
      </PageHeader>
      {editing.mode === 'create' && (
        <CreateUserForm canCreateAdmin={me.role >= ROLE_ROOT} onSaved={(user) => saved(user, `User ${user.username} created.`)} onCancel={() => setEditing({ mode: 'closed' })} />
      )}
      {editing.mode === 'edit' && (
        <EditUserForm
          key={editing.user.id}
          user={editing.user}
          quotaOnly={permissionsOf(me, editing.user).quotaOnly}
          onSaved={(user) => saved(user, `User ${user.username} saved.`)}
          onCancel={() => setEditing({ mode: 'closed' })}
        />
      )}
      {editing.mode === 'keys' && <UserKeys key={editing.user.id} user={editing.user} onClose={() => setEditing({ mode: 'closed' })} />}
      {notice && <Notice>{notice}</Notice>}
      <ErrorAlert error={manage.error} />
      {users.isError ? (
        <ErrorAlert error={users.error} />
      ) : users.isPending ? (
        <Loading what="users" />
      ) : (
        <>
          <div className="table-wrap">
            <table className="admin-table stacked-table">
              <thead>
                <tr>
                  <th scope="col" className="num">ID</th>
                  <th scope="col">Username</th>
                  <th scope="col">Display name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Group</th>
                  <th scope="col" className="num">Balance</th>
                  <th scope="col" className="num">Used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {users.data.items.map((user) => {
                  const permissions = permissionsOf(me, user);
                  return (
                    <tr key={user.id}>
                      <td className="num" data-label="ID">{user.id}</td>
                      <th scope="row">{user.username}</th>
                      <td data-label="Display name">{user.display_name}</td>
                      <td data-label="Role">{roleLabel(user.role)}</td>
                      <td data-label="Status">
                        <span className={`badge ${user.status === USER_STATUS.enabled ? 'ok' : 'off'}`}>{user.status === USER_STATUS.enabled ? 'Enabled' : 'Disabled'}</span>
                      </td>
                      <td className="mono" data-label="Group">{user.group}</td>
                      <td className="num" data-label="Balance" title={`${formatInteger(user.quota)} quota`}>{formatQuotaAsUsd(user.quota, quotaPerUnit)}</td>
                      <td className="num" data-label="Used" title={`${formatInteger(user.used_quota)} quota`}>{formatQuotaAsUsd(user.used_quota, quotaPerUnit)}</td>
                      <td className="actions-cell">
                        <div className="row-actions">
                          {permissions.edit && (
                            <button type="button" aria-label={`Edit ${user.username}`} onClick={() => { setNotice(undefined); setEditing({ mode: 'edit', user }); }}>Edit</button>
                          )}
                          {permissions.keys && (
                            <button type="button" aria-label={`Keys of ${user.username}`} onClick={() => { setNotice(undefined); setEditing({ mode: 'keys', user }); }}>Keys</button>
                          )}
                          {permissions.actions.map((action) => (
                            <button
                              key={action}
                              type="button"
                              className={action === 'delete' || action === 'disable' ? 'danger' : undefined}
                              aria-label={`${MANAGE_ACTION_LABELS[action]} ${user.username}`}
                              onClick={() => act(user, action)}
                              disabled={manage.isPending}
                            >
                              {MANAGE_ACTION_LABELS[action]}
                            </button>
                          ))}
                          {!permissions.edit && permissions.actions.length === 0 && <span className="muted">—</span>}
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <Pagination page={page} pageSize={PAGE_SIZE} total={users.data.total} onPage={setPage} label="Users" />
        </>
      )}
    </>
  );
}

/** The quota a USD amount stands for, as a hint beside the field. */
function quotaHint(usd: number, quotaPerUnit: number): string {
  return Number.isFinite(usd) ? `= ${formatInteger(usdToQuota(usd, quotaPerUnit))} quota (${formatInteger(quotaPerUnit)} per USD 1)` : 'An amount in USD, like 5 or 2.50';
}

function CreateUserForm({ canCreateAdmin, onSaved, onCancel }: { canCreateAdmin: boolean; onSaved: (user: AdminUserView) => Promise<void>; onCancel: () => void }) {
  const quotaPerUnit = useQuotaPerUnit();
  const form = useForm<UserCreateFormInput, unknown, UserCreateFormOutput>({ resolver: zodResolver(userCreateFormSchema), defaultValues: USER_CREATE_DEFAULTS });
  const quotaUsd = useWatch({ control: form.control, name: 'quota_usd' });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (values) => {
    setError(undefined);
    try {
      await onSaved(await api.call('post /api/user', { body: userCreateBodyOf(values, quotaPerUnit) }));
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form className="panel" onSubmit={(event) => void submit(event)} noValidate aria-label="Add a user">
      <h2>Add a user</h2>
      <ErrorAlert error={error} />
      <div className="form-grid">
        <InputField label="Username" autoFocus autoComplete="off" hint="3 to 20 letters, digits or _" error={errors.username?.message} {...form.register('username')} />
        <InputField label="Password" type="password" autoComplete="new-password" hint="8 to 64 characters" error={errors.password && 'Enter 8 to 64 characters'} {...form.register('password')} />
        <InputField label="Display name" autoComplete="off" error={errors.display_name && 'At most 20 characters'} {...form.register('display_name')} />
        <InputField label="Group" autoComplete="off" hint="Decides which channels and group ratio apply" error={errors.group?.message} {...form.register('group')} />
        <InputField
          label="Initial balance (USD)"
          type="number"
          min={0}
          step="any"
          hint={quotaHint(Number(quotaUsd), quotaPerUnit)}
          error={errors.quota_usd?.message}
          {...form.register('quota_usd', { valueAsNumber: true })}
        />
        <SelectField label="Role" error={errors.role?.message} {...form.register('role', { valueAsNumber: true })}>
          <option value={ROLE.user}>User</option>
          {canCreateAdmin && <option value={ROLE.admin}>Admin</option>}
        </SelectField>
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={isSubmitting}>Create user</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

function EditUserForm({ user, quotaOnly, onSaved, onCancel }: { user: AdminUserView; quotaOnly: boolean; onSaved: (user: AdminUserView) => Promise<void>; onCancel: () => void }) {
  const quotaPerUnit = useQuotaPerUnit();
  const form = useForm<UserEditFormInput, unknown, UserEditFormOutput>({ resolver: zodResolver(userEditFormSchema), defaultValues: userEditDefaults(user, quotaPerUnit) });
  const quotaUsd = useWatch({ control: form.control, name: 'quota_usd' });
  const [error, setError] = useState<unknown>();
  const submit = form.handleSubmit(async (values) => {
    setError(undefined);
    try {
      await onSaved(await api.call('put /api/user', { body: userUpdateBodyOf(user, values, quotaPerUnit, quotaOnly) }));
    } catch (err) {
      setError(err);
    }
  });
  const { errors, isSubmitting } = form.formState;
  return (
    <form className="panel" onSubmit={(event) => void submit(event)} noValidate aria-label={`Edit user ${user.username}`}>
      <h2>Edit user {user.username}</h2>
      {quotaOnly && <p className="muted">The root user can change only its own balance here.</p>}
      <ErrorAlert error={error} />
      <div className="form-grid">
        <InputField
          label="Balance (USD)"
          type="number"
          min={0}
          step="any"
          autoFocus
          hint={quotaHint(Number(quotaUsd), quotaPerUnit)}
          error={errors.quota_usd?.message}
          {...form.register('quota_usd', { valueAsNumber: true })}
        />
        {!quotaOnly && (
          <>
            <InputField label="Display name" autoComplete="off" error={errors.display_name && 'At most 20 characters'} {...form.register('display_name')} />
            <InputField label="Group" autoComplete="off" error={errors.group?.message} {...form.register('group')} />
            <InputField label="Remark" autoComplete="off" hint="Only admins see it" error={errors.remark && 'At most 255 characters'} {...form.register('remark')} />
          </>
        )}
      </div>
      <div className="row">
        <button type="submit" className="primary" disabled={isSubmitting}>Save user</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
