import Joi from 'joi';
import { tenantId, uuid } from '../../http/ids';
import type { ImpersonationRequest } from '../../../services/identity/impersonate';

export const impersonationBody = Joi.object<ImpersonationRequest>({
  tenantId: tenantId.required(),
  reason: Joi.string().trim().min(1).max(500).required(),
  note: Joi.string().trim().max(2000),
  userId: uuid.description('The user to act as; by default the tenant’s owner'),
});
