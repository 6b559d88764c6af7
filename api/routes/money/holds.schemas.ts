import Joi from 'joi';
import { uuidV4OrV7 } from '../../http/ids';
import { amount } from './wallets.schemas';

/** Holds and transfers (docs/reference/money.md#resources; amounts as wallets.schemas: 400 invalid-amount). */

export const walletId = Joi.string().pattern(/^[0-9A-HJKMNP-TV-Z]{26}$/).messages({ 'string.pattern.base': '{{#label}} is not a wallet id' });
export const transactionId = uuidV4OrV7;
export const currency = Joi.string().pattern(/^[A-Z][A-Z0-9]{2,9}$/).required().description('ISO 4217 or crypto code of the wallet');
export const reason = Joi.string().max(500).allow('').default('');

export interface WalletParams {
  id: string;
}

export interface HoldParams {
  id: string;
}

export const walletParams = Joi.object<WalletParams>({ id: walletId.required() });
export const holdParams = Joi.object<HoldParams>({ id: transactionId.required() });

export interface HoldBody {
  amount: number;
  currency: string;
  ttl?: string;
  reason: string;
}

export const holdBody = Joi.object<HoldBody>({
  amount,
  currency,
  ttl: Joi.string().max(40).description('`<integer>(s|m|h|d)` or ISO 8601 (`PT30M`); 1 s to 168 h; default MONEY_HOLD_TTL_HOURS (72 h)'),
  reason,
}).or('amount').messages({ 'object.missing': 'amount is required' });

/** Route set B names the hold in the body; route set A in the path, where the body may repeat it. */
export interface SettleBody {
  holdTransactionId?: string;
}

export const settleBodyA = Joi.object<SettleBody>({ holdTransactionId: transactionId });
export const settleBodyB = Joi.object<SettleBody>({ holdTransactionId: transactionId.required() });

const balances = Joi.object({ available: Joi.number().integer().required(), pending: Joi.number().integer().required(), frozen: Joi.number().integer().required() });

/** The transaction of docs/reference/money.md#resources, with `transactionId` (the operation answers' name for id) and a hold's expiry. */
export const transactionResponse = Joi.object({
  transactionId: Joi.string().required(),
  id: Joi.string().required(),
  walletId: Joi.string().required(),
  type: Joi.string().valid('credit', 'debit', 'transfer', 'hold', 'confirm', 'cancel', 'reversal').required(),
  status: Joi.string().valid('completed', 'pending', 'held', 'failed', 'canceled', 'reversed', 'confirmed').required(),
  amount: Joi.number().integer().min(1).required(),
  currency: Joi.string().required(),
  reason: Joi.string().allow('').required(),
  idempotencyKey: Joi.string().allow(null).required(),
  referenceTransactionId: Joi.string().allow(null).required(),
  counterpartyWalletId: Joi.string().allow(null).required(),
  reversed: Joi.boolean().required(),
  meta: Joi.object().unknown(true).required(),
  balanceAfter: balances.required(),
  expiresAt: Joi.string().isoDate().allow(null).required(),
  expiredAt: Joi.string().isoDate().allow(null).required(),
  createdAt: Joi.string().isoDate().required(),
});

/** 202 of a hold, transfer, confirm or cancel whose deadline passed while its workflow ran (issue 19). */
export const flowAccepted = Joi.object({
  jobId: Joi.string().required()
    .description('money-transfer.<key>, money-hold.<key>, money-confirm.<hold key>_<key> or money-cancel.<hold key>_<key>: GET /v1/jobs/{jobId} follows it'),
});
