import { recordAudit } from '../../audit/writer';
import { currentRequestContext } from '../../../common/context';
import { newId } from '../../../common/ids';
import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { isSessionLive } from '../../../db/queries/identity/sessions.queries';
import { isActiveMember } from '../../../db/queries/identity/tenants.queries';
import { selectUserProfile } from '../../../db/queries/identity/users.queries';
import {
  deleteProviderLink, insertProviderLink, lockSignInMethods, selectIdentityUser, selectProviderLinks, type ProviderLink,
} from '../../../db/queries/identity/provider-links.queries';
import type { PermissionCheck } from '../../access/permissions';
import type { AuthState } from '../../../common/context';
import type { IdentityDeps } from '../deps';
import { enqueueAuthEvent } from '../events';
import type { ExternalProviders, ProviderIdentity } from './external-providers';
import type { LinkFlow } from './flow-store';

/**
 * The links of an account (docs/reference/identity.md#rule-35). Linking is the account holder's own act
 * (a provider identity is a way into the account); listing is also open to holders of users.list
 * and unlinking to holders of users.update in a tenant the account belongs to, so an
 * administrator can remove a link that should not be there.
 */

export interface LinkServices {
  deps: IdentityDeps;
  providers: ExternalProviders;
  permissions: PermissionCheck;
}

/** The account holder, or someone whose role grants `permission` in the caller's tenant. */
async function assertSelfOr(permissions: PermissionCheck, auth: AuthState, userId: string, permission: string): Promise<void> {
  if (auth.userId === userId) return;
  if (!await permissions.allows(auth, permission)) throw problems.forbidden(`The permission ${permission} is required for another user's links`);
}

/** GET /users/:id/providers. An account outside the caller's tenant is 404, like one that does not exist. */
export async function listLinks(services: LinkServices, auth: AuthState, userId: string): Promise<readonly ProviderLink[]> {
  await assertSelfOr(services.permissions, auth, userId, 'users.list');
  return withTenant(services.deps.db, auth.tenantId, async (tx) => {
    if (!await selectUserProfile(tx, userId)) throw problems.notFound('user');
    return selectProviderLinks(tx, userId);
  });
}

/**
 * POST /users/:id/providers/:providerId: starts a flow whose callback links the provider identity
 * to the caller instead of signing in. The link is refused at once when the account already has
 * one for this provider.
 */
export async function startLink(services: LinkServices, auth: AuthState, userId: string, providerId: string): Promise<{ url: string }> {
  if (auth.userId !== userId) throw problems.forbidden('Only the account holder can link a provider to the account');
  services.providers.client(providerId);
  const links = await withTenant(services.deps.db, auth.tenantId, (tx) => selectProviderLinks(tx, userId));
  // The same refusal the constraint user_identities_user_provider gives at the callback, but before the round trip.
  if (links.some((link) => link.providerId === providerId)) {
    throw problems.conflict('The account already has a link to this provider; unlink it first');
  }
  return services.providers.begin({ purpose: 'link', providerId, userId, tenantId: auth.tenantId });
}

/**
 * The callback of a link flow. The state alone is not enough: the callback must carry the bearer
 * token of the account that started the flow, so a link URL lured onto someone else's browser
 * cannot attach that person's provider identity to the attacker's account. The callback is a public
 * route, so the token's session is checked here as the gateway checks it on bearer routes: a token
 * of an ended session is refused (docs/decisions/identity.md, Instant revocation and sessions).
 */
export async function assertLinkCaller(deps: IdentityDeps, flow: LinkFlow, authorization: string): Promise<void> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  if (!token) throw problems.unauthorized('Completing a link needs the bearer token of the account that started it');
  const claims = await deps.tokens.verifyAccessToken(token);
  if (claims.sub !== flow.userId) throw problems.unauthorized('The link was started by another account');
  if (!await withTenant(deps.db, claims.tenantId, (tx) => isSessionLive(tx, claims.tenantId, claims.sid))) {
    throw problems.unauthorized('The session has ended; sign in again');
  }
}

/**
 * Links a verified identity to the account of the flow: 409 provider-already-linked when the
 * identity belongs to another account; the same identity again answers its existing link.
 */
export async function completeLink(deps: IdentityDeps, flow: LinkFlow, identity: ProviderIdentity): Promise<ProviderLink> {
  const owner = await selectIdentityUser(deps.db, identity.providerId, identity.subject);
  if (owner && owner.id !== flow.userId) throw problems.providerAlreadyLinked(identity.providerId);
  return withTenant(deps.db, flow.tenantId, async (tx) => {
    if (!await isActiveMember(tx, flow.userId)) throw problems.unauthorized('The account is no longer a member of the tenant it linked from');
    if (owner) {
      const existing = (await selectProviderLinks(tx, flow.userId)).find((link) => link.providerId === identity.providerId);
      if (existing) return existing;
    }
    return linkIdentity(tx, { tenantId: flow.tenantId, userId: flow.userId, actorId: flow.userId }, identity);
  });
}

/**
 * DELETE /users/:id/providers/:providerId. 400 last-provider when the link is the account's only
 * way to sign in (no password, no other link). A link of a provider no longer configured can still
 * be removed.
 */
export async function unlink(services: LinkServices, auth: AuthState, userId: string, providerId: string): Promise<void> {
  await assertSelfOr(services.permissions, auth, userId, 'users.update');
  await withTenant(services.deps.db, auth.tenantId, async (tx) => {
    const methods = await lockSignInMethods(tx, userId);
    if (!methods) throw problems.notFound('user');
    const links = await selectProviderLinks(tx, userId);
    const link = links.find((candidate) => candidate.providerId === providerId);
    if (!link) throw problems.notFound('provider link');
    if (!methods.hasPassword && links.length === 1) throw problems.lastProvider();
    await deleteProviderLink(tx, userId, providerId);
    const parties = { tenantId: auth.tenantId, userId, actorId: auth.userId };
    await auditLink(tx, parties, 'auth.provider.unlinked', { before: link });
    await announceLink(tx, parties, 'auth.provider.unlinked', link);
  });
}

export interface LinkParties {
  /** The tenant transaction the link is written in (one the account belongs to). */
  tenantId: string;
  userId: string;
  /** Who caused it: the account itself, or an administrator. */
  actorId: string;
}

/**
 * Writes a link and its audit record in the caller's tenant transaction, and the auth.provider.linked
 * event that mails the holder (a new way into the account, ASVS 2.5.5), except for the link an
 * account is created with (`newAccount`): nothing about its ways in has changed.
 */
export async function linkIdentity(
  tx: DatabaseTransactionConnection, parties: LinkParties, identity: ProviderIdentity, { newAccount = false } = {},
): Promise<ProviderLink> {
  const displayName = identity.name ?? ([identity.givenName, identity.familyName].filter(Boolean).join(' ') || null);
  const link = await insertProviderLink(tx, {
    id: newId(), userId: parties.userId, providerId: identity.providerId, externalId: identity.subject,
    email: identity.email, displayName,
  });
  await auditLink(tx, parties, 'auth.provider.linked', { after: link });
  if (!newAccount) await announceLink(tx, parties, 'auth.provider.linked', link);
  return link;
}

/** The holder's notice of a link made or removed (services/notify/security-mail.ts), naming who did it. */
async function announceLink(
  tx: DatabaseTransactionConnection, parties: LinkParties, type: 'auth.provider.linked' | 'auth.provider.unlinked', link: ProviderLink,
): Promise<void> {
  await enqueueAuthEvent(tx, type, parties.tenantId, parties.userId, {
    provider_id: link.providerId, changed_by: parties.actorId, changed_at: new Date().toISOString(),
  });
}

function auditLink(
  tx: DatabaseTransactionConnection,
  parties: LinkParties,
  action: 'auth.provider.linked' | 'auth.provider.unlinked',
  snapshot: { before?: ProviderLink; after?: ProviderLink },
): Promise<string> {
  return recordAudit(tx, {
    tenantId: parties.tenantId,
    source: 'identity',
    traceId: currentRequestContext()?.traceId,
    action,
    entityType: 'user',
    entityId: parties.userId,
    actorId: parties.actorId,
    ...snapshot,
  });
}
