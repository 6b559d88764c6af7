import Joi from 'joi';

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

export const reversalABody = Joi.object<ReversalABody>({ originalTransactionId: Joi.string().uuid(), reason });
export const reversalBBody = Joi.object<ReversalBBody>({ originalTransactionId: Joi.string().uuid().required(), reason });
