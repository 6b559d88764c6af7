import { problems } from '../../../common/problems';
import type { DatabaseTransactionConnection } from '../../../db/pool';
import {
  revokeMemberSessions, selectAccountReach, updateAccountProfile, updateAccountStatus, updateMembershipStatus,
  type AccountChange, type Member, type ProfileChange,
} from '../../../db/queries/identity/members.queries';
import type { AuthState } from '../../../common/context';
import { changeAccount } from '../account-changes';
import type { IdentityDeps } from '../deps';
import type { UserView } from '../user-view';
import { avatarChangeOf, recordAvatarReference } from './avatar';
import { isOwner, lockedMember, memberOrNotFound, memberView, recordUserUpdated, userViewChanged } from './members';

/**
 * PATCH /users/:id: the partial update (name, e-mail, status; docs/reference/identity.md#rule-31, #rule-32), and the avatar from a
 * platform file (null clears it; services/identity/users/avatar.ts).
 */
export interface UserPatch extends ProfileChange {
  status?: 'active' | 'locked';
  avatarFileId?: string | null;
}

/** Only the fields whose value actually changes. */
function profileChanges(member: Member, patch: UserPatch): AccountChange {
  const change: AccountChange = {};
  if (patch.firstName !== undefined && patch.firstName !== member.firstName) change.firstName = patch.firstName;
  if (patch.lastName !== undefined && patch.lastName !== member.lastName) change.lastName = patch.lastName;
  if (patch.email !== undefined && patch.email.toLowerCase() !== member.email.toLowerCase()) change.email = patch.email;
  return change;
}

/**
 * Name, e-mail and avatar belong to the global account, which may also be a member of other tenants. They
 * are changed by the account's holder, or by a tenant that is the account's only one; otherwise an
 * admin of one tenant could rename, or take over by e-mail and password reset, a user of another.
 * The owner's account is changed by the owner only (docs/reference/identity.md#rule-32: the owner cannot be blocked).
 */
async function assertMayChangeProfile(tx: DatabaseTransactionConnection, auth: AuthState, member: Member): Promise<void> {
  if (member.id === auth.userId) return;
  if (isOwner(member)) throw problems.forbidden('Only the owner changes the owner’s account');
  const { otherTenants } = await selectAccountReach(tx, member.id);
  if (otherTenants > 0) throw problems.forbidden('The account also belongs to other tenants; only its holder can change its name, e-mail or avatar');
}

/**
 * `locked` blocks the membership in this tenant (sessions here end at once); the account's own
 * lock, set after failed recovery attempts and effective in every tenant, is lifted by `active`
 * only from a tenant that is the account's only one.
 */
async function applyStatus(tx: DatabaseTransactionConnection, auth: AuthState, member: Member, status: 'active' | 'locked'): Promise<void> {
  if (status === 'locked') {
    if (member.id === auth.userId) throw problems.forbidden('You cannot lock your own account');
    if (isOwner(member)) throw problems.forbidden('The owner cannot be locked');
    if (member.membershipStatus === 'blocked') return;
    await updateMembershipStatus(tx, auth.tenantId, member.id, 'blocked');
    await revokeMemberSessions(tx, auth.tenantId, member.id);
    return;
  }
  if (member.accountStatus !== 'active') {
    const { otherTenants } = await selectAccountReach(tx, member.id);
    if (otherTenants > 0) throw problems.forbidden('The account is locked in every tenant it belongs to; it cannot be unlocked from one of them');
    await updateAccountStatus(tx, auth.tenantId, member.id, 'active');
  }
  if (member.membershipStatus === 'blocked') await updateMembershipStatus(tx, auth.tenantId, member.id, 'active');
}

/**
 * Applies a partial update in one transaction with its audit record and the sparse
 * auth.user.updated event (docs/reference/identity.md#events: only changed fields; an avatar has no field there, so an
 * avatar alone is told by the event's updated_by and updated_at). A soft-deleted user is restored
 * first (409). Nothing changed (the same avatar file again included): nothing is written.
 */
export async function updateUser(
  deps: IdentityDeps, auth: AuthState, userId: string, patch: UserPatch,
  // How the request names the avatar's file, for its errors: `fileId` in PUT /auth/me/avatar.
  avatarField = 'avatarFileId',
): Promise<UserView> {
  return changeAccount(deps, auth.tenantId, userId, async (tx) => {
    const member = await lockedMember(tx, auth.tenantId, userId);
    if (member.membershipStatus === 'deleted') throw problems.conflict('The user is deleted; restore it first');
    const before = memberView(member, auth.tenantId);

    const profile = profileChanges(member, patch);
    const avatar = patch.avatarFileId === undefined ? null : await avatarChangeOf(tx, auth.tenantId, member, patch.avatarFileId, avatarField);
    if (avatar) profile.avatarUrl = avatar.avatarUrl;
    if (Object.keys(profile).length > 0) {
      await assertMayChangeProfile(tx, auth, member);
      await updateAccountProfile(tx, auth.tenantId, userId, profile);
      if (avatar) await recordAvatarReference(tx, auth.tenantId, userId, avatar);
    }
    if (patch.status !== undefined) await applyStatus(tx, auth, member, patch.status);

    const after = memberView(await memberOrNotFound(tx, auth.tenantId, userId), auth.tenantId);
    if (userViewChanged(before, after)) await recordUserUpdated(tx, auth, { action: 'auth.user.updated', before, after });
    return after;
  });
}

/**
 * PUT and DELETE /auth/me/avatar: the caller's own avatar (null clears it), for members who lack
 * users.update. It is updateUser on the caller itself, so its rules, transaction, event and audit
 * record are the PATCH's; the body names the file `fileId`.
 */
export function setOwnAvatar(deps: IdentityDeps, auth: AuthState, fileId: string | null): Promise<UserView> {
  return updateUser(deps, auth, auth.userId, { avatarFileId: fileId }, 'fileId');
}
