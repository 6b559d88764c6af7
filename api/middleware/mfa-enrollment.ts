import type { AuthState } from '../../common/context';
import { problems } from '../../common/problems';
import { MANAGEMENT_PERMISSIONS } from '../../services/access/permissions';
import type { PermissionResolver } from '../runtime/permission-resolver';
import { authOf, type AppMiddleware } from '../context';

/**
 * REQUIRE_MFA_FOR_ADMINS (docs/reference/identity.md#rule-48): a person holding a management permission in
 * the token's tenant, whose token says two-factor was off when it was issued, may only call the routes that
 * enrol it (`allowedBeforeMfa`); everything else is 403 mfa-enrollment-required. The token's `mfa` claim
 * answers for most callers with no lookup at all; only a token without two-factor costs one look at the
 * grants, which the permission check of the same request reads from the same cache. The grants, not the
 * token's role names, decide: a custom role holding roles.assign is as much an administrator as the admin role.
 * Not held to it: API keys (machine callers with no sign-in to add a factor to; their permissions are fixed
 * when created, by a person who passed this check) and impersonation sessions (the Platform Owner holds
 * users.impersonate, so could only start one with two-factor on; docs/reference/identity.md#rule-49).
 */
export async function assertMfaEnrolled(resolver: PermissionResolver, auth: AuthState): Promise<void> {
  if (auth.mfa === true || auth.apiKey || auth.impersonatorId) return;
  if (await resolver.allowsAny(auth, MANAGEMENT_PERMISSIONS)) throw problems.mfaEnrollmentRequired();
}

/** Put right after authentication on every bearer route but those declared `allowedBeforeMfa`, when the setting is on. */
export function requireMfaEnrollment(resolver: PermissionResolver): AppMiddleware {
  return async (ctx, next) => {
    await assertMfaEnrolled(resolver, authOf(ctx));
    await next();
  };
}
