import { problems } from '../../../common/problems';
import {
  revokeMemberSessions, selectAccountReach, updateAccountDeleted, updateMembershipStatus,
} from '../../../db/queries/identity/members.queries';
import type { AuthState } from '../../../common/context';
import { changeAccount } from '../account-changes';
import type { IdentityDeps } from '../deps';
import { enqueueAuthEvent } from '../events';
import type { UserView } from '../user-view';
import { auditUserChange, isOwner, lockedMember, memberOrNotFound, memberView, recordUserUpdated } from './members';

/**
 * DELETE /users/:id, a soft delete in the caller's tenant: the membership is marked deleted (its
 * roles and the account's data stay), the user's sessions in this tenant end, and login to this
 * tenant is refused. When no membership of the account is live any more, the account itself is
 * marked deleted, so a login fails as for a deleted account. The owner, and the caller itself,
 * cannot be deleted. Deleting a deleted user changes nothing.
 */
export async function deleteUser(deps: IdentityDeps, auth: AuthState, userId: string): Promise<void> {
  await changeAccount(deps, auth.tenantId, userId, async (tx) => {
    const member = await lockedMember(tx, auth.tenantId, userId);
    if (member.membershipStatus === 'deleted') return;
    if (userId === auth.userId) throw problems.forbidden('You cannot delete your own account');
    if (isOwner(member)) throw problems.forbidden('The owner cannot be deleted');

    await updateMembershipStatus(tx, auth.tenantId, userId, 'deleted');
    await revokeMemberSessions(tx, auth.tenantId, userId);
    const { liveMemberships } = await selectAccountReach(tx, userId);
    const accountDeleted = liveMemberships === 0;
    if (accountDeleted) await updateAccountDeleted(tx, auth.tenantId, userId, true);

    const after = await memberOrNotFound(tx, auth.tenantId, userId);
    await enqueueAuthEvent(tx, 'auth.user.deleted', auth.tenantId, userId, {
      deleted_by: auth.userId, deleted_at: after.deletedAt, account_deleted: accountDeleted,
    });
    await auditUserChange(tx, auth, {
      action: 'auth.user.deleted', userId, before: memberView(member, auth.tenantId), after: null, meta: { accountDeleted },
    });
  });
}

/**
 * PATCH /users/:id/restore: the membership is live again (active, sessions can start) and the
 * account no longer deleted. Restoring a user that is not deleted changes nothing.
 */
export async function restoreUser(deps: IdentityDeps, auth: AuthState, userId: string): Promise<UserView> {
  return changeAccount(deps, auth.tenantId, userId, async (tx) => {
    const member = await lockedMember(tx, auth.tenantId, userId);
    const before = memberView(member, auth.tenantId);
    if (member.membershipStatus !== 'deleted') return before;

    await updateMembershipStatus(tx, auth.tenantId, userId, 'active');
    await updateAccountDeleted(tx, auth.tenantId, userId, false);
    const after = memberView(await memberOrNotFound(tx, auth.tenantId, userId), auth.tenantId);
    await recordUserUpdated(tx, auth, { action: 'auth.user.restored', before, after });
    return after;
  });
}
