import { problems } from '../../common/problems';
import { withTenant } from '../../db/tenant';
import { isActiveMember, selectUserTenants, type UserTenant } from '../../db/queries/identity/tenants.queries';
import { selectUserProfile } from '../../db/queries/identity/users.queries';
import type { AuthState } from '../../common/context';
import type { IdentityDeps, TokenPair } from './deps';
import { inheritedAuthTime, issuePair, publicPair } from './sessions';
import type { MeAnswer } from './user-view';

/**
 * GET /auth/me: the account in the token's tenant, with its roles and their permissions, as they are
 * now, not as the token says (through the gateway's MeCache, which drops an answer when a change is announced).
 */
export async function me(deps: IdentityDeps, auth: AuthState): Promise<MeAnswer> {
  const found = await deps.meAnswers.answer(auth.tenantId, auth.userId);
  if (!found) throw problems.unauthorized('The account is no longer a member of this tenant');
  return found;
}

/** GET /auth/tenants: every tenant the caller belongs to. */
export async function listTenants(deps: IdentityDeps, auth: AuthState): Promise<readonly UserTenant[]> {
  return selectUserTenants(deps.db, auth.userId);
}

/**
 * POST /auth/switch-tenant: a new session in another tenant of the caller. A tenant the caller is
 * not a member of is 404, exactly as one that does not exist. No credential is proved here, so the new
 * session keeps the caller's sign-in time (inheritedAuthTime).
 */
export async function switchTenant(deps: IdentityDeps, auth: AuthState, tenantId: string): Promise<TokenPair> {
  return withTenant(deps.db, tenantId, async (tx) => {
    if (!await isActiveMember(tx, auth.userId)) throw problems.notFound('tenant');
    const profile = (await selectUserProfile(tx, auth.userId))!;
    if (profile.deletedAt !== null || profile.status === 'locked') throw problems.unauthorized('The account cannot sign in');
    return publicPair(await issuePair(deps, tx, {
      userId: auth.userId, email: profile.email, tenantId, authenticatedAt: inheritedAuthTime(auth), mfa: profile.mfaEnabled,
    }));
  });
}
