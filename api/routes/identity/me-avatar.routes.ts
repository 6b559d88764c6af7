import { authOf } from '../../context';
import type { IdentityDeps } from '../../../services/identity/deps';
import { setOwnAvatar } from '../../../services/identity/users/update';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import { user } from './auth.schemas';
import { avatarBody, type AvatarBody } from './me-avatar.schemas';

type NoParams = Record<string, never>;

/** Where the avatar can be seen from, said by both routes: the limits of an account-wide address to a tenant's file. */
const AVATAR_LIMITS = 'avatarUrl becomes /v1/users/{userId}/avatar?v={fileId}, the platform\'s stable address of the '
  + 'avatar (GET redirects to a short-lived URL of its 64×64 thumbnail; any member of the tenant may follow it, and it '
  + 'answers 404 until the scan has passed). The avatar is the account\'s, shown in every tenant it belongs to, but the '
  + 'file stays in the tenant it was set from: in the account\'s other tenants the address answers 404.';

/**
 * The caller's own avatar (docs/reference/identity.md#rule-34), for members who lack users.update, which
 * PATCH /users/:id {avatarFileId} needs. Both answer the User as PATCH /users/:id does (the `user`
 * schema, without /auth/me's permissions): they are the same update of the same account, and an
 * avatar changes no permission; GET /auth/me shows the change at once.
 */
export function meAvatarRoutes(deps: IdentityDeps): AnyRoute[] {
  return [
    defineRoute<NoParams, NoParams, AvatarBody>({
      namespace: 'iam', method: 'PUT', path: '/auth/me/avatar', operationId: 'iam.auth.avatar.set',
      summary: 'Sets the current user\'s avatar from an uploaded image',
      description: 'fileId names an image (image/*) of the avatars bucket of the current tenant, pending_scan or available. '
        + 'An unknown id, another tenant\'s file and a rejected or deleted one are 400 validation-error FILE_NOT_FOUND; a file '
        + `of the tenant in another bucket or not an image, FILE_NOT_AVATAR. The same file again changes nothing. ${AVATAR_LIMITS}`,
      auth: 'bearer',
      schemas: { body: avatarBody, response: { 200: user } },
      async handler(ctx) {
        ctx.body = await setOwnAvatar(deps, authOf(ctx), ctx.guard.body.fileId);
      },
    }),
    defineRoute({
      namespace: 'iam', method: 'DELETE', path: '/auth/me/avatar', operationId: 'iam.auth.avatar.clear',
      summary: 'Clears the current user\'s avatar',
      description: 'Answers the user with avatarUrl null; the file itself is kept (an avatars file nothing references is '
        + 'removed by the orphan sweep 30 days after it is found unreferenced). Without an avatar nothing changes.',
      auth: 'bearer',
      schemas: { response: { 200: user } },
      async handler(ctx) {
        ctx.body = await setOwnAvatar(deps, authOf(ctx), null);
      },
    }),
  ];
}
