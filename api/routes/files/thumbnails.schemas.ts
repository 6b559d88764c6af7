import Joi from 'joi';
import { uuid } from '../../http/ids';
import { THUMBNAIL_PRESET_NAMES } from '../../../services/files/thumbnails';

/** Request schemas of GET /files/:id/thumbnail/:preset (docs/reference/files.md#rule-15) and GET /users/:id/avatar. */

export interface ThumbnailParams {
  id: string;
  preset: string;
}

/**
 * Any preset name passes the guard: one that is not a preset is 404 preset-not-found
 * (docs/reference/files.md#rule-15), answered by the service, not a 400 validation-error.
 */
export const thumbnailParams = Joi.object<ThumbnailParams>({
  id: uuid.required(),
  preset: Joi.string().max(64).required().description(`One of ${THUMBNAIL_PRESET_NAMES.join(', ')}`),
});

export interface AvatarParams {
  id: string;
}

export interface AvatarQuery {
  v?: string;
}

export const avatarParams = Joi.object<AvatarParams>({ id: uuid.required().description('The user') });

export const avatarQuery = Joi.object<AvatarQuery>({
  v: uuid.description('The avatar\'s file, as avatarUrl names it so the address changes with the picture; the current avatar is answered whatever it says'),
});
