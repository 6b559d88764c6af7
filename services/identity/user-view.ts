import type { UserProfile } from '../../db/queries/identity/users.queries';

/** Document 1, User: the account as seen from one tenant. */
export interface UserView extends UserProfile {
  tenantId: string;
  roles: string[];
}

/** GET /auth/me: the account in a tenant, with the roles it holds there and their permissions. */
export type MeAnswer = UserView & { permissions: string[] };

export function toUserView(profile: UserProfile, tenantId: string, roles: string[]): UserView {
  return { ...profile, tenantId, roles };
}
