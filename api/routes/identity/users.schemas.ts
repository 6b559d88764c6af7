import Joi from 'joi';
import { uuid } from '../../http/ids';
import type { UserListQuery } from '../../../services/identity/users/read';
import type { UserPatch } from '../../../services/identity/users/update';
import { pageOf, pageQuery } from '../../http/pagination';
import { email, name, user } from './auth.schemas';
import { AVATAR_FILE, avatarFile } from './me-avatar.schemas';

export interface UserIdParams {
  id: string;
}

export const userIdParams = Joi.object<UserIdParams>({ id: uuid.required() });

export const userListQuery = Joi.object<UserListQuery>({
  ...pageQuery,
  include_deleted: Joi.boolean().default(false).description('Also list soft-deleted users'),
  status: Joi.string().valid('active', 'locked', 'pending_deletion'),
  email: Joi.string().trim().min(1).max(254).description('Part of the e-mail address, case-insensitive'),
});

/** At least one field; `status` moves between active and locked (pending_deletion is not set here). */
export const userPatchBody = Joi.object<UserPatch>({
  firstName: name,
  lastName: name,
  email,
  status: Joi.string().valid('active', 'locked'),
  avatarFileId: avatarFile.allow(null).description(`${AVATAR_FILE}; null clears the avatar`),
}).min(1);

export const userList = pageOf(user);

export const userDetails = user.keys({ permissions: Joi.array().items(Joi.string()).required() });

/** docs/reference/access.md#rule-17: {user_id, roles, permissions}, the union over all roles. */
export const userPermissions = Joi.object({
  user_id: Joi.string().uuid().required(),
  roles: Joi.array().items(Joi.string()).required(),
  permissions: Joi.array().items(Joi.string()).required(),
});
