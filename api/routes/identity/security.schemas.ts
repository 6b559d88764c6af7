import Joi from 'joi';
import { uuid } from '../../http/ids';
import type { AcceptInviteRequest, InviteRequest } from '../../../services/identity/invitations';
import type { NewTenantUser } from '../../../services/identity/create-user';
import type { PasswordChange } from '../../../services/identity/change-password';
import { PASSWORD_MAX_LENGTH } from '../../../services/identity/passwords';
import { email, newPassword, user } from './auth.schemas';
import { totpCode } from './mfa.schemas';

/**
 * Security flows (docs/reference/identity.md, Rules: e-mail links). Bodies are snake_case as the
 * reference shows them (docs/reference/conventions.md#rule-6: invite, accept-invite and
 * verify-email); POST /users speaks camelCase like every user resource.
 */

/** A one-time token: 32 bytes in base64url are 43 characters; anything else cannot be one. */
const oneTimeToken = Joi.string().pattern(/^[A-Za-z0-9_-]{43}$/).messages({ 'string.pattern.base': '{{#label}} is not a valid link token' });

export interface TokenBody {
  token: string;
}

export const tokenBody = Joi.object<TokenBody>({ token: oneTimeToken.required() });

export const emailVerifiedResponse = Joi.object({ email_verified: Joi.boolean().valid(true).required() });

export interface RequestResetBody {
  email: string;
}

export const requestResetBody = Joi.object<RequestResetBody>({ email: email.required() });

export interface ResetPasswordBody {
  token: string;
  password: string;
}

export const resetPasswordBody = Joi.object<ResetPasswordBody>({
  token: oneTimeToken.required(),
  password: newPassword.required(),
});

export const resetPasswordResponse = Joi.object({ message: Joi.string().required() });

/** The current password is checked as it was set, whatever rules applied then (like a login's). */
export const changePasswordBody = Joi.object<PasswordChange>({
  currentPassword: Joi.string().min(1).max(PASSWORD_MAX_LENGTH).required(),
  newPassword: newPassword.required(),
  code: totpCode,
});

/** `role_id` or `roles`, not both; neither means member. Role names as roles are named (docs/reference/access.md#rule-9). */
const roleChoice = {
  role_id: uuid,
  roles: Joi.array().items(Joi.string().trim().min(1).max(100)).min(1).max(50).unique(),
};

export const inviteBody = Joi.object<InviteRequest>({ email: email.required(), ...roleChoice }).oxor('role_id', 'roles');

export const invitationResponse = Joi.object({
  invite_id: Joi.string().uuid().required(),
  email: Joi.string().required(),
  expires_at: Joi.string().isoDate().required(),
});

export const acceptInviteBody = Joi.object<AcceptInviteRequest>({
  token: oneTimeToken.required(),
  name: Joi.string().trim().min(1).max(200).required(),
  password: newPassword.required(),
});

/** docs/reference/identity.md#rule-28: the accept-invite variant of a token response. */
export const acceptInviteResponse = Joi.object({
  access_token: Joi.string().required(),
  refresh_token: Joi.string().required(),
  token_type: Joi.string().valid('Bearer').required(),
  expires_in: Joi.number().integer().min(1).required(),
  user: Joi.object({
    id: Joi.string().uuid().required(),
    email: Joi.string().required(),
    email_verified: Joi.boolean().required(),
    roles: Joi.array().items(Joi.string()).required(),
    tenant_id: Joi.string().uuid().required(),
  }).required(),
});

const personName = Joi.string().trim().min(1).max(100);

export const createUserBody = Joi.object<NewTenantUser>({
  email: email.required(),
  firstName: personName.required(),
  lastName: personName.required(),
  ...roleChoice,
}).oxor('role_id', 'roles');

export const createdUserResponse = user;
