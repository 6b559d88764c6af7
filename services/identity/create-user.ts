import { newId } from '../../common/ids';
import { issueOneTimeToken } from './one-time-tokens';
import { withTenant } from '../../db/tenant';
import { assignRoles, selectTenantName } from '../../db/queries/identity/security-flows.queries';
import { insertMembership } from '../../db/queries/identity/tenants.queries';
import { insertUser, selectUserProfile } from '../../db/queries/identity/users.queries';
import type { AuthState } from '../../common/context';
import type { IdentityDeps } from './deps';
import { emailLink } from './email-links';
import { enqueueAuthEvent } from './events';
import { eventRole, resolveRoleChoice, type RoleChoice } from './role-choice';
import { toUserView, type UserView } from './user-view';

export interface NewTenantUser extends RoleChoice {
  email: string;
  firstName: string;
  lastName: string;
}

/**
 * POST /users (docs/reference/identity.md#rule-29): the account is created in the caller's tenant without a password, with
 * the chosen roles, and e-mailed a set-password link (a one-time token with the invitation's 72 h),
 * redeemed by POST /auth/reset-password. An address that already has an account, here or in another
 * tenant, is 409 conflict (users_email_lower): an existing account joins a tenant only by accepting an
 * invitation, never without being asked.
 */
export async function createUser(deps: IdentityDeps, auth: AuthState, request: NewTenantUser): Promise<UserView> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const roles = await resolveRoleChoice(tx, request);
    const userId = newId();
    await insertUser(tx, { id: userId, email: request.email, passwordHash: null, firstName: request.firstName, lastName: request.lastName });
    await insertMembership(tx, auth.tenantId, userId);
    await assignRoles(tx, auth.tenantId, userId, roles.map((role) => role.id));
    const profile = (await selectUserProfile(tx, userId))!;
    const roleNames = roles.map((role) => role.name);
    await enqueueAuthEvent(tx, 'auth.user.created', auth.tenantId, userId, {
      email: profile.email,
      display_name: `${profile.firstName} ${profile.lastName}`.trim() || profile.email,
      role: eventRole(roleNames),
      created_at: profile.createdAt,
    });

    const token = await issueOneTimeToken(tx, deps.config.identity.oneTimeTokenTtl, {
      purpose: 'set_password', userId, tenantId: auth.tenantId, email: profile.email,
    });
    await deps.mailer.send({
      to: profile.email,
      template: 'set-password',
      data: { link: emailLink(deps.config, 'set-password', token.value), tenantName: await selectTenantName(tx), expiresAt: token.expiresAt },
    }, `set-password:${token.id}`, auth.tenantId);
    return toUserView(profile, auth.tenantId, roleNames);
  });
}
