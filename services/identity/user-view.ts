import type { CommonQueryMethods } from 'slonik';
import { selectMe, type UserProfile } from '../../db/queries/identity/users.queries';

/** The User (docs/reference/identity.md, Resources): the account as seen from one tenant. */
export interface UserView extends UserProfile {
  tenantId: string;
  roles: string[];
}

/** GET /auth/me: the account in a tenant, with the roles it holds there and their permissions. */
export type MeAnswer = UserView & { permissions: string[] };

export function toUserView(profile: UserProfile, tenantId: string, roles: string[]): UserView {
  return { ...profile, tenantId, roles };
}

/** GET /auth/me's answer with the tenant's RBAC version its grants are at least as new as. */
export interface VersionedMeAnswer {
  answer: MeAnswer;
  rbacVersion: number;
}

/**
 * GET /auth/me read now, in one statement (auth_me, migration 0021), with the tenant's RBAC version
 * its grants are at least as new as; null when the account is no member of the tenant.
 */
export async function readMe(db: CommonQueryMethods, tenantId: string, userId: string): Promise<VersionedMeAnswer | null> {
  const row = await selectMe(db, tenantId, userId);
  if (!row) return null;
  const { roles, permissions, rbacVersion, ...profile } = row;
  return { answer: { ...toUserView(profile, tenantId, roles), permissions }, rbacVersion };
}
