import type { FilesDeps } from '../../../services/files/deps';
import { avatarRedirect } from '../../../services/files/avatars';
import { thumbnailRedirect } from '../../../services/files/thumbnail-on-demand';
import { authOf } from '../../context';
import { defineRoute, type AnyRoute } from '../../http/route-registry';
import {
  avatarParams, avatarQuery, thumbnailParams, type AvatarParams, type AvatarQuery, type ThumbnailParams,
} from './thumbnails.schemas';

/**
 * A file's thumbnails (docs/reference/files.md#rule-15), rendered on demand (issue 17), which reading
 * needs files.read for; and a user's avatar, its avatar_64 thumbnail, which any member may see.
 */
export function thumbnailRoutes(deps: FilesDeps): AnyRoute[] {
  return [
    defineRoute<ThumbnailParams>({
      namespace: 'files', method: 'GET', path: '/files/:id/thumbnail/:preset', operationId: 'files.thumbnail',
      summary: 'Redirects to a thumbnail of an image file, rendering it the first time it is asked for',
      description: '302 to a presigned URL of the WebP thumbnail, valid 300 s. Presets: icon_32 (32×32), avatar_64 (64×64), '
        + 'card_300 (300×200), preview_600 (600×400), each cut to its box; full_1200 (1200 wide, height by aspect ratio, never '
        + 'enlarged). A preset not rendered yet is rendered once from the original and kept. An unknown preset, and any preset '
        + 'of a file that is not an image, is 404 preset-not-found; an image that cannot be decoded is 422 processing-failed. '
        + 'Only an available file has thumbnails: pending_scan, an unknown id, another tenant\'s file and a deleted file are '
        + '404 file-not-found; a file the malware scan rejected is 422 file-rejected.',
      auth: 'bearer', permission: 'files.read',
      schemas: { params: thumbnailParams, response: { 302: null } },
      async handler(ctx) {
        const { id, preset } = ctx.guard.params;
        // The redirect names a URL of a short life: no cache keeps it.
        ctx.set('Cache-Control', 'private, no-store');
        ctx.redirect(await thumbnailRedirect(deps, authOf(ctx), id, preset));
      },
    }),
    defineRoute<AvatarParams, AvatarQuery>({
      namespace: 'files', method: 'GET', path: '/users/:id/avatar', operationId: 'files.avatar',
      summary: 'Redirects to a user\'s avatar, its 64×64 thumbnail',
      description: 'The address a user\'s avatarUrl holds (PUT /auth/me/avatar, PATCH /users/:id {avatarFileId}): 302 to a '
        + 'presigned URL of the avatar_64 WebP thumbnail of the user\'s avatar file in this tenant, valid 300 s. Any member '
        + 'of the tenant may look, without files.read. A user without an avatar in this tenant, an unknown id, another '
        + 'tenant\'s user and an avatar still being scanned are 404 file-not-found; an avatar the malware scan rejected is '
        + '422 file-rejected.',
      auth: 'bearer',
      schemas: { params: avatarParams, query: avatarQuery, response: { 302: null } },
      async handler(ctx) {
        ctx.set('Cache-Control', 'private, no-store');
        ctx.redirect(await avatarRedirect(deps, authOf(ctx), ctx.guard.params.id));
      },
    }),
  ];
}
