import type { AdminUserView, LoginView, SelfView } from '@modelgate/schemas';
import { unixSeconds } from '../../lib/clock';
import type { UserProfile } from './repository';

/** docs/api.md 3.2 `GET /api/user/self`. */
export function selfView(user: UserProfile): SelfView {
  return {
    ...loginView(user),
    email: user.email ?? '',
    quota: Number(user.quota),
    used_quota: Number(user.usedQuota),
    request_count: Number(user.requestCount),
    aff_code: user.affCode ?? '',
    aff_count: user.affCount,
    aff_quota: Number(user.affQuota),
    aff_history_quota: Number(user.affHistoryQuota),
    inviter_id: user.inviterId,
    two_factor_enabled: user.twoFactor?.enabled ?? false,
    created_at: unixSeconds(user.createdAt),
  };
}

/** What admins see: the profile plus the admin-only remark. */
export function adminUserView(user: UserProfile): AdminUserView {
  return { ...selfView(user), remark: user.remark };
}

/** The data of a completed login (docs/api.md 3.1). */
export function loginView(user: { id: number; username: string; displayName: string; role: number; status: number; group: string }): LoginView {
  return {
    id: user.id,
    username: user.username,
    display_name: user.displayName,
    role: user.role,
    status: user.status,
    group: user.group,
  };
}
