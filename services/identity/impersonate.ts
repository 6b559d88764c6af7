import { recordAudit } from '../audit/writer';
import { currentRequestContext } from '../../common/context';
import { problems } from '../../common/problems';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { selectMember } from '../../db/queries/identity/members.queries';
import { isPlatformOwner, selectCurrentTenant, selectTenantOwner } from '../../db/queries/identity/platform.queries';
import type { AuthState } from '../../common/context';
import type { IdentityDeps, TokenPair } from './deps';
import { inheritedAuthTime, issuePair, publicPair } from './sessions';

export interface ImpersonationRequest {
  tenantId: string;
  /** Why; required, and kept in the audit record. */
  reason: string;
  note?: string;
  /** The user to act as; by default the tenant's owner. */
  userId?: string;
}

/** The user an impersonation acts as: the one named (a live, active member), else the tenant's owner. */
async function targetOf(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string | undefined,
): Promise<{ id: string; email: string; mfaEnabled: boolean }> {
  if (userId === undefined) {
    const owner = await selectTenantOwner(tx);
    if (!owner) throw problems.notFound('tenant owner');
    return owner;
  }
  const member = await selectMember(tx, tenantId, userId);
  if (!member || member.membershipStatus !== 'active' || member.accountStatus !== 'active' || member.deletedAt !== null) {
    throw problems.notFound('user');
  }
  return member;
}

/**
 * POST /auth/impersonate: the Platform Owner acts as a user of a customer tenant. Only a caller
 * whose own token is in the platform tenant and who holds the platform-scoped Platform Owner role
 * may (the users.impersonate permission alone, which tenant admins hold, is not enough); an
 * impersonation cannot start another. The pair is scoped to the tenant; its access token carries
 * `act: {sub: <Platform Owner>}` and, like its refresh token, ends one hour after the start, so
 * refreshing keeps the actor and never extends the hour. The audit record
 * `auth.impersonation.started` (reason, note) commits with the session in the tenant's own trail.
 */
export async function impersonate(deps: IdentityDeps, auth: AuthState, request: ImpersonationRequest): Promise<TokenPair> {
  if (auth.impersonatorId) throw problems.forbidden('An impersonation cannot start another one');
  const allowed = await withTenant(deps.db, auth.tenantId, (tx) => isPlatformOwner(tx, auth.userId));
  if (!allowed) throw problems.forbidden('Only the Platform Owner can impersonate');

  return withTenant(deps.db, request.tenantId, async (tx) => {
    const tenant = await selectCurrentTenant(tx);
    if (!tenant || tenant.deleted) throw problems.notFound('tenant');
    if (tenant.kind === 'platform') throw problems.forbidden('Impersonation enters customer tenants only');
    const target = await targetOf(tx, request.tenantId, request.userId);

    const startedAt = Math.floor(Date.now() / 1000);
    const endsAt = new Date((startedAt + deps.config.identity.ttl.impersonation) * 1000).toISOString();
    const pair = await issuePair(deps, tx, {
      userId: target.id, email: target.email, tenantId: request.tenantId, impersonation: { impersonatorId: auth.userId, endsAt },
      // The impersonated account's, like every claim but `act`; the gateway does not hold an impersonation to it,
      // since the Platform Owner passed the two-factor requirement to start it (docs/reference/identity.md#rule-49).
      mfa: target.mfaEnabled,
      // The Platform Owner's sign-in is the one behind the impersonation.
      authenticatedAt: inheritedAuthTime(auth),
    });
    await recordAudit(tx, {
      tenantId: request.tenantId,
      source: 'identity',
      action: 'auth.impersonation.started',
      entityType: 'user',
      entityId: target.id,
      actorId: auth.userId,
      impersonatorId: auth.userId,
      meta: { reason: request.reason, note: request.note ?? null, expiresAt: endsAt },
      traceId: currentRequestContext()?.traceId,
    });
    return publicPair(pair);
  });
}
