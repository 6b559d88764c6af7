import Joi from 'joi';
import { PASSWORD_MAX_LENGTH } from '../../../services/identity/passwords';
import type { DisableRequest } from '../../../services/identity/mfa/enrollment';
import type { MfaChallengeRequest } from '../../../services/identity/mfa/challenge';
import type { RecoveryRequest } from '../../../services/identity/mfa/recovery';

/** A TOTP code as authenticator apps show it: six digits. */
export const totpCode = Joi.string().pattern(/^[0-9]{6}$/);
/** Checks a password as it was set, whatever the rules were then (as login does). */
const currentPassword = Joi.string().min(1).max(PASSWORD_MAX_LENGTH);

export interface VerifyMfaBody {
  code: string;
}

export const verifyMfaBody = Joi.object<VerifyMfaBody>({ code: totpCode.required() });

export const disableMfaBody = Joi.object<DisableRequest>({
  password: currentPassword.required(),
  code: totpCode,
});

/** Recovery codes are 12 characters; spaces and hyphens a user typed are allowed and ignored. */
const recoveryCode = Joi.string().trim().min(1).max(64).pattern(/^[A-Za-z0-9 -]+$/);

export const recoveryBody = Joi.object<RecoveryRequest>({
  email: Joi.string().trim().max(254).email({ tlds: { allow: false } }).lowercase().required(),
  password: currentPassword.required(),
  recoveryCode: recoveryCode.required(),
});

/** The challenge token of a provider sign-in and exactly one second factor. */
export const mfaChallengeBody = Joi.object<MfaChallengeRequest>({
  mfaToken: Joi.string().max(2048).required(),
  mfaCode: totpCode,
  recoveryCode,
}).xor('mfaCode', 'recoveryCode');

export const provisioningResponse = Joi.object({
  secret: Joi.string().pattern(/^[A-Z2-7]+=*$/).required(),
  otpauthUrl: Joi.string().pattern(/^otpauth:\/\/totp\//).required(),
  qrCode: Joi.string().pattern(/^data:image\/png;base64,/).required(),
});

const recoveryCodeList = Joi.array().items(Joi.string()).length(10);

export const activatedResponse = Joi.object({
  mfaEnabled: Joi.boolean().valid(true).required(),
  recoveryCodes: recoveryCodeList.required(),
});

export const disabledResponse = Joi.object({ mfaEnabled: Joi.boolean().valid(false).required() });

export const remainingResponse = Joi.object({ remaining: Joi.number().integer().min(0).required() });

export const regeneratedResponse = Joi.object({ codes: recoveryCodeList.required() });
