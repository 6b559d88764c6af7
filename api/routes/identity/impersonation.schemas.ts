import Joi from 'joi';
import type { ImpersonationRequest } from '../../../services/identity/impersonate';

export const impersonationBody = Joi.object<ImpersonationRequest>({
  tenantId: Joi.string().uuid().required(),
  reason: Joi.string().trim().min(1).max(500).required(),
  note: Joi.string().trim().max(2000),
  userId: Joi.string().uuid().description('The user to act as; by default the tenant’s owner'),
});
