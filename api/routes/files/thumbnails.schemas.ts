import Joi from 'joi';
import { uuid } from '../../http/ids';
import { THUMBNAIL_PRESET_NAMES } from '../../../services/files/thumbnails';

/** Request schemas of GET /files/:id/thumbnail/:preset (document 2, Endpoints / Files). */

export interface ThumbnailParams {
  id: string;
  preset: string;
}

/**
 * Any preset name passes the guard: one that is not a preset is 404 preset-not-found (document 2,
 * Errors), answered by the service, not a 400 validation-error.
 */
export const thumbnailParams = Joi.object<ThumbnailParams>({
  id: uuid.required(),
  preset: Joi.string().max(64).required().description(`One of ${THUMBNAIL_PRESET_NAMES.join(', ')}`),
});
