import type { CommonQueryMethods } from 'slonik';
import { hashPassword, passwordNeedsRehash, verifyPassword } from './passwords';
import { problems } from '../../common/problems';
import { isActiveMember, type UserTenant } from '../../db/queries/identity/tenants.queries';
import {
  selectUserForLogin, selectUserProfile, updateLastTenant, upgradePasswordHash,
} from '../../db/queries/identity/users.queries';
import type { LoginMethod } from './tokens';
import { changeAccount } from './account-changes';
import type { IdentityDeps, TokenPair } from './deps';
import { authEvent } from './events';
import { assertLoginSecondFactor } from './mfa/second-factor';
import { issuePair, openSignInSession, publicPair, type SessionSubject } from './sessions';

export interface Credentials {
  email: string;
  password: string;
  mfaCode?: string;
}

/** "Tenant selection required" (docs/reference/identity.md#rule-6). */
export interface TenantSelection {
  requiresTenantSelection: true;
  sessionToken: string;
  tenants: UserTenant[];
}

/**
 * Password login. Every way of being wrong (unknown address, wrong password, deleted account)
 * answers the same 401 after the same Argon2id work, and counts against the throttle. A user of
 * one tenant, or of several with a remembered choice, gets a token pair; otherwise the
 * tenant-selection result with a 5-minute session token.
 */
export async function login(deps: IdentityDeps, credentials: Credentials, ip: string): Promise<TokenPair | TenantSelection> {
  const check = await deps.throttle.assertAllowed(credentials.email, ip);
  const user = await selectUserForLogin(deps.db, credentials.email);
  const passwordOk = await verifyPassword(deps.config.identity.passwordPepper, user?.passwordHash, credentials.password);
  if (!user?.passwordHash || !passwordOk || user.deletedAt !== null) {
    await deps.throttle.recordFailure(credentials.email, ip);
    throw problems.invalidCredentials();
  }
  // Only someone who knows the password learns that the account is locked.
  if (user.status === 'locked') throw problems.accountLocked();
  // Before any tenant or token is revealed, and before the failure count is cleared: a password
  // alone must not reset the throttle that slows guessing the code.
  if (user.mfaEnabled) await assertLoginSecondFactor(deps, user, credentials, ip);
  await deps.throttle.recordSuccess(credentials.email, check);
  // Only now is the password known to the server in clear again: a hash made before the pepper (or
  // with older parameters) is made again with it (docs/reference/identity.md#rule-43).
  if (passwordNeedsRehash(user.passwordHash)) {
    await upgradePasswordHash(deps.db, user.id, user.passwordHash, await hashPassword(deps.config.identity.passwordPepper, credentials.password));
  }

  return completeLogin(deps, user, { method: 'password' });
}

export type { LoginMethod } from './tokens';

/**
 * The end of every successful sign-in (password or external provider), once the account is known
 * to be usable: a user of one tenant, or of several with a remembered choice, gets a token pair;
 * otherwise the tenant-selection result with a 5-minute session token.
 */
export async function completeLogin(
  deps: IdentityDeps,
  user: { id: string; email: string; lastTenantId: string | null; mfaEnabled: boolean },
  how: LoginMethod,
): Promise<TokenPair | TenantSelection> {
  // The tenants are read, one chosen and the session opened in it by one statement, which also sets
  // the event's tenant (openSignInSession); with no tenant to choose it writes nothing.
  const { tenants, pair } = await openSignInSession(deps, user, loggedInEvent(CHOSEN_BY_STATEMENT, user.id, how));
  if (tenants.length === 0) throw problems.forbidden('The account belongs to no tenant');
  if (pair) return publicPair(pair);
  const session = await deps.tokens.issueSelectionToken(user.id, how);
  return { requiresTenantSelection: true, sessionToken: session.token, tenants };
}

/**
 * Stands for the tenant of an event whose tenant the statement that writes it chooses and sets
 * (auth_open_sign_in); a well-formed version 4 UUID, so the event passes the usual checks.
 */
const CHOSEN_BY_STATEMENT = '00000000-0000-4000-8000-000000000000';

/**
 * POST /auth/select-tenant: the session token proves a sign-in (password or provider, which it names)
 * within 5 minutes; the chosen tenant must be one of the user's (any other is 404, never 403, so
 * tenants cannot be probed). The session reports the sign-in's own method.
 */
export async function selectTenant(
  deps: IdentityDeps,
  selection: { sessionToken: string; tenantId: string; rememberChoice: boolean },
): Promise<TokenPair> {
  const { userId, how, authenticatedAt } = await deps.tokens.verifySelectionToken(selection.sessionToken);
  const { tenantId } = selection;
  return changeAccount(deps, tenantId, userId, async (tx) => {
    const profile = await selectUserProfile(tx, userId);
    if (!profile || !await isActiveMember(tx, userId)) throw problems.notFound('tenant');
    // The account may have been deleted or locked since its password was checked.
    if (profile.deletedAt !== null || profile.status === 'locked') throw problems.unauthorized('The account cannot sign in');
    if (selection.rememberChoice) await updateLastTenant(tx, userId, tenantId);
    return openSession(deps, tx, { userId, email: profile.email, tenantId, authenticatedAt, mfa: profile.mfaEnabled }, how);
  });
}

/** A new session (a new refresh-token family) in the subject's tenant, with its auth.user.logged_in event. */
async function openSession(deps: IdentityDeps, db: CommonQueryMethods, subject: SessionSubject, how: LoginMethod): Promise<TokenPair> {
  return publicPair(await issuePair(deps, db, subject, loggedInEvent(subject.tenantId, subject.userId, how)));
}

function loggedInEvent(tenantId: string, userId: string, how: LoginMethod) {
  return authEvent('auth.user.logged_in', tenantId, userId, { ...how, logged_in_at: new Date().toISOString() });
}
