import { withTenant } from '../../../db/tenant';
import { selectMembers, type MemberStatus } from '../../../db/queries/identity/members.queries';
import { selectRoleGrants } from '../../../db/queries/identity/roles.queries';
import type { AuthState } from '../../../common/context';
import { decodePageToken, idPosition, pageFrom } from '../../../common/pagination';
import type { IdentityDeps } from '../deps';
import type { UserView } from '../user-view';
import { memberOrNotFound, memberView } from './members';

export interface UserListQuery {
  page_size: number;
  page_token?: string;
  /** Soft-deleted users are left out unless asked for. */
  include_deleted: boolean;
  status?: MemberStatus;
  /** Part of the e-mail address, case-insensitive. */
  email?: string;
}

/** GET /users: the tenant's users in creation (id) order, a page at a time. */
export async function listUsers(deps: IdentityDeps, auth: AuthState, query: UserListQuery): Promise<{ data: UserView[]; next_page_token?: string }> {
  const rows = await withTenant(deps.db, auth.tenantId, (tx) => selectMembers(tx, auth.tenantId, {
    afterId: decodePageToken(query.page_token, idPosition)?.id,
    // One more than the page: whether it exists tells if there is a next page.
    limit: query.page_size + 1,
    includeDeleted: query.include_deleted,
    status: query.status,
    emailContains: query.email,
  }));
  const page = pageFrom(rows, query.page_size);
  return { ...page, data: page.data.map((row) => memberView(row, auth.tenantId)) };
}

/** GET /users/:id: the user with its roles and the union of their permissions in this tenant. */
export async function getUser(deps: IdentityDeps, auth: AuthState, userId: string): Promise<UserView & { permissions: string[] }> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const member = await memberOrNotFound(tx, auth.tenantId, userId);
    const { permissions } = await selectRoleGrants(tx, userId);
    return { ...memberView(member, auth.tenantId), permissions };
  });
}

/** GET /users/:id/permissions: {user_id, roles, permissions}, the union over all roles (docs/reference/access.md#rule-17). */
export async function getUserPermissions(
  deps: IdentityDeps,
  auth: AuthState,
  userId: string,
): Promise<{ user_id: string; roles: string[]; permissions: string[] }> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    await memberOrNotFound(tx, auth.tenantId, userId);
    const { roles, permissions } = await selectRoleGrants(tx, userId);
    return { user_id: userId, roles, permissions };
  });
}
