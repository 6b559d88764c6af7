import type { UserProfile } from '../../db/queries/identity/users.queries';

/** Document 1, User: the account as seen from one tenant. */
export interface UserView extends UserProfile {
  tenantId: string;
  roles: string[];
}

export function toUserView(profile: UserProfile, tenantId: string, roles: string[]): UserView {
  return { ...profile, tenantId, roles };
}
