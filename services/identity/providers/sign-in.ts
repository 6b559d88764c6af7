import { problems } from '../../../common/problems';
import { withTenant } from '../../../db/tenant';
import { selectUserTenants } from '../../../db/queries/identity/tenants.queries';
import {
  selectIdentityUser, selectUserForProviderEmail, type ProviderUser,
} from '../../../db/queries/identity/provider-links.queries';
import type { IdentityDeps, TokenPair } from '../deps';
import { completeLogin, type TenantSelection } from '../login';
import { mfaChallenge } from '../mfa/challenge';
import { createAccount } from '../register';
import type { ProviderIdentity } from './external-providers';
import { linkIdentity } from './links';

/**
 * Sign-in with a verified provider identity, in this order:
 * 1. the account linked to (provider, subject): the subject, never the address, identifies a person;
 * 2. else the account holding the same address, linked now only when the provider asserts
 *    email_verified and the account's own address is verified too (otherwise 409 conflict: the
 *    holder signs in and links the provider from the account). Both are needed: an unverified
 *    provider address could be anyone's, and an unverified account may have been registered by
 *    someone waiting for the real owner to arrive through a provider (pre-account hijacking);
 * 3. else a new account with its own tenant, exactly as registration makes it, without a password.
 * It then ends like a password login: a token pair, or the tenant-selection result.
 */
export async function signInWithProvider(deps: IdentityDeps, identity: ProviderIdentity): Promise<TokenPair | TenantSelection> {
  const linked = await selectIdentityUser(deps.db, identity.providerId, identity.subject);
  if (linked) return completeProviderLogin(deps, linked, identity);

  const holder = identity.email ? await selectUserForProviderEmail(deps.db, identity.email) : null;
  if (holder) {
    if (!identity.emailVerified || !holder.emailVerified) {
      throw problems.conflict('An account with this e-mail address already exists; sign in to it and link the provider from the account');
    }
    assertCanSignIn(holder);
    const [home] = await selectUserTenants(deps.db, holder.id);
    if (!home) throw problems.forbidden('The account belongs to no tenant');
    await withTenant(deps.db, home.id, (tx) => linkIdentity(tx, { tenantId: home.id, userId: holder.id, actorId: holder.id }, identity));
    return completeProviderLogin(deps, holder, identity);
  }

  if (!identity.email) {
    throw problems.unauthorized('The provider shared no e-mail address, which a new account needs; allow the email scope');
  }
  const created = await createAccount(deps, {
    email: identity.email,
    passwordHash: null,
    firstName: identity.givenName ?? identity.name ?? '',
    lastName: identity.familyName ?? '',
    emailVerified: identity.emailVerified,
  }, (tx, { userId, tenantId }) => linkIdentity(tx, { tenantId, userId, actorId: userId }, identity, { newAccount: true }).then(() => undefined));
  return { accessToken: created.accessToken, refreshToken: created.refreshToken, expiresAt: created.expiresAt };
}

/** The same refusals as a password login, for an account the provider identity leads to. */
function assertCanSignIn(user: ProviderUser): void {
  if (user.deletedAt !== null) throw problems.unauthorized('The account cannot sign in');
  if (user.status === 'locked') throw problems.accountLocked();
}

/**
 * The provider proved the first factor only: an account with two-factor on is answered 401
 * mfa-required with a challenge token and completes at POST /auth/mfa/challenge (mfa/challenge.ts),
 * so a compromised provider account alone does not open it.
 */
async function completeProviderLogin(deps: IdentityDeps, user: ProviderUser, identity: ProviderIdentity): Promise<TokenPair | TenantSelection> {
  assertCanSignIn(user);
  const how = { method: 'oidc', provider: identity.providerId } as const;
  if (user.mfaEnabled) throw await mfaChallenge(deps, user, how);
  return completeLogin(deps, user, how);
}
