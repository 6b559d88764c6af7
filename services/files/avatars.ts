import type { AuthState } from '../../common/context';
import { Problem } from '../../common/problems';
import { selectReferencedFile } from '../../db/queries/files/references.queries';
import { withTenant } from '../../db/tenant';
import type { FilesDeps } from './deps';
import { asAvailable } from './read';
import { thumbnailUrlOfFile } from './thumbnail-on-demand';

/**
 * GET /users/:id/avatar, the address a user's avatarUrl holds (views.ts avatarUrlOf): where to
 * redirect, the avatar_64 thumbnail of the file the user's `user.avatar` reference names in the
 * caller's tenant (services/identity/users/avatar.ts writes it). Any member may look: an avatar is
 * a face shown beside a name, not a file of the tenant's that files.read guards. A user without an
 * avatar here, an unknown id and another tenant's user are one 404 file-not-found, as is an avatar
 * still being scanned (its thumbnail does not exist yet).
 */
export async function avatarRedirect(deps: FilesDeps, auth: AuthState, userId: string): Promise<string> {
  const { tenantId } = auth;
  // The reference and its file in one statement: faces are shown by the page, each one a request.
  const file = await withTenant(deps.db, tenantId, (tx) => selectReferencedFile(tx, { tenantId, referrer: 'user.avatar', referrerId: userId }));
  if (file === null) throw new Problem('file-not-found', `User ${userId} has no avatar in this tenant`);
  return thumbnailUrlOfFile(deps, asAvailable(file, file.id), 'avatar_64');
}
