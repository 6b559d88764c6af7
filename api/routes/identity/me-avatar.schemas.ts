import Joi from 'joi';
import { uuid } from '../../http/ids';

/** What an avatar's file must be (services/identity/users/avatar.ts), said once for both routes that take one. */
export const AVATAR_FILE = 'An image file (image/*) of the avatars bucket of this tenant, pending_scan or available';

export const avatarFile = uuid.description(AVATAR_FILE);

export interface AvatarBody {
  fileId: string;
}

/** PUT /auth/me/avatar; DELETE clears it, so null is not taken here. */
export const avatarBody = Joi.object<AvatarBody>({ fileId: avatarFile.required() });
