import Joi from 'joi';
import { tenantId } from '../../http/ids';
import { isBreachedPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../../services/identity/passwords';
import type { Credentials } from '../../../services/identity/login';
import type { Registration } from '../../../services/identity/register';

/** Addresses are kept in lower case; joi's TLD list would refuse reserved domains such as .test. */
export const email = Joi.string().trim().max(254).email({ tlds: { allow: false } }).lowercase();

/**
 * A new password: at least 12 characters (TOO_SHORT) and not on the shipped breached list
 * (BREACHED_PASSWORD, see api/http/field-errors.ts).
 */
export const newPassword = Joi.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH)
  .custom((value: string, helpers) => (isBreachedPassword(value) ? helpers.error('password.breached') : value))
  .messages({ 'password.breached': '{{#label}} appears in a list of breached passwords; choose another' });

export const name = Joi.string().trim().max(100).allow('');
const opaqueToken = Joi.string().max(2048);

export const registerBody = Joi.object<Registration>({
  email: email.required(),
  password: newPassword.required(),
  firstName: name,
  lastName: name,
  tenantName: Joi.string().trim().min(1).max(200),
});

/** A login checks the password it is given, whatever rules applied when it was set. */
export const loginBody = Joi.object<Credentials>({
  email: email.required(),
  password: Joi.string().min(1).max(PASSWORD_MAX_LENGTH).required(),
  mfaCode: Joi.string().pattern(/^[0-9]{6}$/),
});

export interface RefreshTokenBody {
  refreshToken: string;
}

export const refreshTokenBody = Joi.object<RefreshTokenBody>({ refreshToken: opaqueToken.required() });

export interface SelectTenantBody {
  sessionToken: string;
  tenantId: string;
  rememberChoice: boolean;
}

export const selectTenantBody = Joi.object<SelectTenantBody>({
  sessionToken: opaqueToken.required(),
  tenantId: tenantId.required(),
  rememberChoice: Joi.boolean().default(false),
});

export interface SwitchTenantBody {
  tenantId: string;
}

export const switchTenantBody = Joi.object<SwitchTenantBody>({ tenantId: tenantId.required() });

export const tokenPair = Joi.object({
  accessToken: Joi.string().required(),
  refreshToken: Joi.string().required(),
  expiresAt: Joi.string().isoDate().required(),
});

const tenantItem = Joi.object({
  id: Joi.string().uuid().required(),
  name: Joi.string().required(),
  logoUrl: Joi.string().allow(null).required(),
  role: Joi.string().allow(null).required(),
});

export const tenantSelection = Joi.object({
  requiresTenantSelection: Joi.boolean().valid(true).required(),
  sessionToken: Joi.string().required(),
  tenants: Joi.array().items(tenantItem).required(),
});

export const loginResponse = Joi.alternatives().try(tokenPair, tenantSelection);

const timestamp = Joi.string().isoDate();

/** The User (docs/reference/identity.md#resources). */
export const user = Joi.object({
  id: Joi.string().uuid().required(),
  email: Joi.string().required(),
  firstName: Joi.string().allow('').required(),
  lastName: Joi.string().allow('').required(),
  avatarUrl: Joi.string().allow(null).required(),
  tenantId: Joi.string().uuid().required(),
  roles: Joi.array().items(Joi.string()).required(),
  emailVerified: Joi.boolean().required(),
  mfaEnabled: Joi.boolean().required(),
  status: Joi.string().valid('active', 'locked', 'pending_deletion').required(),
  createdAt: timestamp.required(),
  updatedAt: timestamp.required(),
  deletedAt: timestamp.allow(null).required(),
});

export const registerResponse = tokenPair.keys({
  user: user.required(),
  tenant: Joi.object({ id: Joi.string().uuid().required(), name: Joi.string().required() }).required(),
  // docs/reference/identity.md#rule-20: recovery codes are generated at registration; shown this once.
  recoveryCodes: Joi.array().items(Joi.string()).length(10).required(),
});

export const meResponse = user.keys({ permissions: Joi.array().items(Joi.string()).required() });

export const tenantList = Joi.object({ data: Joi.array().items(tenantItem).required() });
