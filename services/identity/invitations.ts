import { newId } from '../../common/ids';
import { hashPassword, verifyPassword } from './passwords';
import { issueOneTimeToken, redeemOneTimeToken } from './one-time-tokens';
import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { selectRoleGrants } from '../../db/queries/identity/roles.queries';
import {
  assignRoles, ensureMembership, markEmailVerified, markNewAccountVerified, selectMemberByEmail, selectTenantName,
} from '../../db/queries/identity/security-flows.queries';
import { insertMembership, isActiveMember } from '../../db/queries/identity/tenants.queries';
import { insertUser, selectUserForLogin, selectUserProfile } from '../../db/queries/identity/users.queries';
import { accountIdOf, type AuthState } from '../../common/context';
import { changingAccounts } from './account-changes';
import type { IdentityDeps } from './deps';
import { emailLink } from './email-links';
import { authEvent, enqueueAuthEvent } from './events';
import { eventRole, resolveRoleChoice, type RoleChoice } from './role-choice';
import { issuePair } from './sessions';

export interface InviteRequest extends RoleChoice {
  email: string;
}

/** The 202 body of an invitation (docs/reference/identity.md#rule-27). */
export interface Invitation {
  invite_id: string;
  email: string;
  expires_at: string;
}

/** Who sent an invitation, as the mail names them; an API key (no account) is "A team member". */
async function inviterName(tx: DatabaseTransactionConnection, userId: string): Promise<string> {
  const account = accountIdOf(userId);
  const inviter = account === null ? null : await selectUserProfile(tx, account);
  const name = inviter ? `${inviter.firstName} ${inviter.lastName}`.trim() : '';
  return name || inviter?.email || 'A team member';
}

/**
 * POST /auth/invite. Someone who is already an active member gets a duplicate-invite notice instead
 * of a conflict (docs/reference/identity.md#rule-27) and the answer is 202 without a body (null here). Anyone else gets an
 * invitation token (72 h) carrying the chosen roles, and its mail, handed over before the commit.
 */
export async function invite(deps: IdentityDeps, auth: AuthState, request: InviteRequest): Promise<Invitation | null> {
  return withTenant(deps.db, auth.tenantId, async (tx) => {
    const roles = await resolveRoleChoice(tx, request);
    const tenantName = await selectTenantName(tx);
    const invitedBy = await inviterName(tx, auth.userId);
    const member = await selectMemberByEmail(tx, request.email);
    // A deleted member keeps their membership row, roles and data so that a restore brings them all back;
    // a new invitation would instead add a second way in beside it, so the inviter is told to restore.
    if (member?.membershipStatus === 'deleted') {
      throw problems.conflict(`${request.email} is a deleted member of this tenant; restore the user with PATCH /v1/users/${member.id}/restore`);
    }
    if (member && member.membershipStatus === 'active' && member.deletedAt === null) {
      // No token, so nothing else names this mail: each such request is its own notice.
      await deps.mailer.send({ to: request.email, template: 'duplicate-invite', data: { tenantName, invitedBy } }, `duplicate-invite:${newId()}`, auth.tenantId);
      return null;
    }
    const token = await issueOneTimeToken(tx, deps.config.identity.oneTimeTokenTtl, {
      purpose: 'invite', userId: null, tenantId: auth.tenantId, email: request.email,
      payload: { roleIds: roles.map((role) => role.id), invitedBy: auth.userId },
    });
    await deps.mailer.send({
      to: request.email,
      template: 'invite',
      data: { link: emailLink(deps.config, 'accept-invite', token.value), tenantName, invitedBy, expiresAt: token.expiresAt },
    }, `invite:${token.id}`, auth.tenantId);
    return { invite_id: token.id, email: request.email, expires_at: token.expiresAt };
  });
}

export interface AcceptInviteRequest {
  token: string;
  name: string;
  password: string;
}

/** The accept-invite variant of the token pair (docs/reference/identity.md#rule-28). */
export interface AcceptedInvite {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  user: { id: string; email: string; email_verified: boolean; roles: string[]; tenant_id: string };
}

/** "Ada King" → first name Ada, last name King; a single word is the first name. */
function splitName(name: string): { firstName: string; lastName: string } {
  const [firstName, ...rest] = name.trim().split(/\s+/);
  return { firstName: firstName ?? '', lastName: rest.join(' ') };
}

/**
 * POST /auth/accept-invite, in one transaction of the inviting tenant: the token is consumed, the
 * account created with its address verified (or, for an address that already has an account,
 * docs/reference/identity.md#rule-28: the membership is added; the existing password must be given and is not changed),
 * the invited roles assigned, auth.user.created written, and a session opened.
 *
 * For an existing account the password check counts against the login throttle, so an invitation
 * cannot become a way around it.
 */
export function acceptInvite(deps: IdentityDeps, request: AcceptInviteRequest, ip: string): Promise<AcceptedInvite> {
  return changingAccounts(deps, (changed) => redeemOneTimeToken(deps.db, ['invite'], request.token, async (tx, invitation) => {
    const { tenantId, email } = invitation;
    const roleIds = (invitation.payload.roleIds ?? []) as string[];
    const existing = await selectUserForLogin(tx, email);
    let userId: string;
    let joined = true;
    if (existing) {
      await deps.throttle.assertAllowed(email, ip);
      if (existing.deletedAt !== null || !await verifyPassword(deps.config.identity.passwordPepper, existing.passwordHash, request.password)) {
        await deps.throttle.recordFailure(email, ip);
        throw problems.invalidCredentials();
      }
      if (existing.status === 'locked') throw problems.accountLocked();
      userId = existing.id;
      changed(userId);
      joined = await ensureMembership(tx, tenantId, userId);
      if (!await isActiveMember(tx, userId)) throw problems.forbidden('The membership in this tenant is blocked');
      await markEmailVerified(tx, userId, email);
    } else {
      userId = newId();
      await insertUser(tx, { id: userId, email, passwordHash: await hashPassword(deps.config.identity.passwordPepper, request.password), ...splitName(request.name) });
      await insertMembership(tx, tenantId, userId);
      await markNewAccountVerified(tx, userId);
    }
    await assignRoles(tx, tenantId, userId, roleIds);

    const profile = (await selectUserProfile(tx, userId))!;
    const { roles } = await selectRoleGrants(tx, userId);
    // The account is new to this tenant (a member who joined meanwhile only gains the roles).
    if (joined) {
      await enqueueAuthEvent(tx, 'auth.user.created', tenantId, userId, {
        email: profile.email,
        display_name: `${profile.firstName} ${profile.lastName}`.trim() || profile.email,
        role: eventRole(roles),
        created_at: new Date().toISOString(),
      });
    }
    const pair = await issuePair(deps, tx, { userId, email: profile.email, tenantId, mfa: profile.mfaEnabled },
      authEvent('auth.user.logged_in', tenantId, userId, { method: 'invite', logged_in_at: new Date().toISOString() }));
    return {
      access_token: pair.accessToken,
      refresh_token: pair.refreshToken,
      token_type: 'Bearer',
      expires_in: deps.config.identity.ttl.accessToken,
      user: { id: userId, email: profile.email, email_verified: profile.emailVerified, roles, tenant_id: tenantId },
    };
  }));
}
