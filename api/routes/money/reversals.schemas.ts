import Joi from 'joi';
import { uuid } from '../../http/ids';

/** Reversal bodies: set A names the original in the path (the body may repeat it), set B in the body. */
export interface ReversalABody {
  originalTransactionId?: string;
  reason: string;
}

export interface ReversalBBody {
  originalTransactionId: string;
  reason: string;
}

const reason = Joi.string().max(500).allow('').default('');

export const reversalABody = Joi.object<ReversalABody>({ originalTransactionId: uuid, reason });
export const reversalBBody = Joi.object<ReversalBBody>({ originalTransactionId: uuid.required(), reason });
