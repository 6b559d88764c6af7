import { currentRequestContext } from '../../../common/context';
import { recordAudit } from '../../audit/writer';
import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import { lockMembership, selectMember, type Member } from '../../../db/queries/identity/members.queries';
import type { AuthState } from '../../../common/context';
import { enqueueAuthEvent } from '../events';
import type { UserView } from '../user-view';

/** The User (docs/reference/identity.md, Resources), as the tenant sees its member (status and deletedAt are per tenant). */
export function memberView(member: Member, tenantId: string): UserView {
  const { membershipStatus: _membership, accountStatus: _account, roles, ...profile } = member;
  return { ...profile, tenantId, roles };
}

/** A user of the caller's tenant, deleted or not; any other id (another tenant's user included) is 404. */
export async function memberOrNotFound(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<Member> {
  const member = await selectMember(tx, tenantId, userId);
  if (!member) throw problems.notFound('user');
  return member;
}

/** As memberOrNotFound, with the membership locked for the rest of the transaction (changes run one at a time). */
export async function lockedMember(tx: DatabaseTransactionConnection, tenantId: string, userId: string): Promise<Member> {
  if (!await lockMembership(tx, tenantId, userId)) throw problems.notFound('user');
  return memberOrNotFound(tx, tenantId, userId);
}

export const isOwner = (member: Member): boolean => member.roles.includes('owner');

/**
 * The audit record of a change to a user, in the transaction of the change. The caller is the
 * actor; under impersonation the writer adds the Platform Owner as impersonatorId by itself.
 */
export function auditUserChange(
  tx: DatabaseTransactionConnection,
  auth: AuthState,
  change: { action: string; userId: string; before: UserView | null; after: UserView | null; meta?: Record<string, unknown> },
): Promise<string> {
  return recordAudit(tx, {
    tenantId: auth.tenantId,
    source: 'identity',
    action: change.action,
    entityType: 'user',
    entityId: change.userId,
    actorId: auth.userId,
    before: change.before as Record<string, unknown> | null,
    after: change.after as Record<string, unknown> | null,
    meta: change.meta ?? null,
    traceId: currentRequestContext()?.traceId,
  });
}

export const displayName = (user: Pick<UserView, 'firstName' | 'lastName' | 'email'>): string =>
  `${user.firstName} ${user.lastName}`.trim() || user.email;

/** UserUpdatedEvent's optional fields that differ between the two views. */
function sparseUpdate(before: UserView, after: UserView): { email?: string; display_name?: string; is_active?: boolean } {
  const isActive = (view: UserView) => view.status === 'active' && view.deletedAt === null;
  return {
    ...(after.email !== before.email ? { email: after.email } : {}),
    ...(displayName(after) !== displayName(before) ? { display_name: displayName(after) } : {}),
    ...(isActive(after) !== isActive(before) ? { is_active: isActive(after) } : {}),
  };
}

/**
 * Whether the User changed beyond its updatedAt: what a change's event and audit record are written
 * for. Wider than sparseUpdate, whose fields (the auth.user.updated schema, services/events/kernel-schemas.ts) show neither the avatar
 * nor a change of names that keeps the display name.
 */
export function userViewChanged(before: UserView, after: UserView): boolean {
  return (['email', 'firstName', 'lastName', 'avatarUrl', 'status', 'deletedAt'] as const).some((field) => before[field] !== after[field]);
}

/**
 * The record of a change to a user that keeps it (an update, a restore), in the change's
 * transaction: the sparse auth.user.updated event and the audit record `action` with both views.
 */
export async function recordUserUpdated(
  tx: DatabaseTransactionConnection, auth: AuthState, change: { action: 'auth.user.updated' | 'auth.user.restored'; before: UserView; after: UserView },
): Promise<void> {
  const { action, before, after } = change;
  await enqueueAuthEvent(tx, 'auth.user.updated', auth.tenantId, after.id, {
    ...sparseUpdate(before, after), updated_by: auth.userId, updated_at: after.updatedAt,
  });
  await auditUserChange(tx, auth, { action, userId: after.id, before, after });
}
