import Joi from 'joi';
import { problems } from '../../../common/problems';
import type { MoneyBody } from '../../../services/money/operations';
import type { NewWalletBody, WalletListQuery } from '../../../services/money/wallets';
import { uuid } from '../../http/ids';
import { pageOf, pageQuery } from '../../http/pagination';

/** Request and response schemas of the wallet routes (docs/reference/money.md#resources; camelCase). */

/** ULIDs as we write them: 26 upper-case Crockford base32 characters. */
export const walletId = Joi.string().pattern(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'ULID');
/** ISO 4217 or a crypto code (USDT, BTC), as migration 0012 checks it. */
export const currency = Joi.string().pattern(/^[A-Z][A-Z0-9]{2,9}$/, 'currency code');

export interface WalletIdParams {
  id: string;
}

export const walletIdParams = Joi.object<WalletIdParams>({ id: walletId.required() });

export const newWalletBody = Joi.object<NewWalletBody>({
  userId: uuid.required(),
  currency: currency.required(),
  label: Joi.string().trim().max(200).allow('').default(''),
});

export const walletListQuery = Joi.object<WalletListQuery>({
  ...pageQuery,
  userId: uuid,
  currency,
});

/**
 * Integers in minor units only (docs/reference/money.md#rule-1): zero, negative, fractional, non-numeric (a string
 * "100" included) or beyond 2^53 answer 400 invalid-amount, not validation-error; joi hands the
 * problem to the guard as it is. A missing amount is an ordinary validation error.
 */
export const amount = Joi.number().strict().integer().min(1).max(Number.MAX_SAFE_INTEGER)
  .error(() => problems.invalidAmount())
  .description('Positive integer in minor units (cents)');

export const moneyBody = Joi.object<MoneyBody>({
  amount,
  currency: currency.description('The wallet’s currency (optional; any other is 400)'),
  reason: Joi.string().max(500).allow('').default(''),
  meta: Joi.object().unknown(true).default({}),
}).or('amount').messages({ 'object.missing': 'amount is required' });

export const balance = Joi.object({
  available: Joi.number().integer().min(0).required(),
  pending: Joi.number().integer().min(0).required(),
  frozen: Joi.number().integer().min(0).required(),
});

export const wallet = Joi.object({
  id: walletId.required(),
  tenantId: Joi.string().uuid().required(),
  userId: Joi.string().uuid().required(),
  currency: currency.required(),
  label: Joi.string().allow('').required(),
  balance: balance.required(),
  createdAt: Joi.string().isoDate().required(),
  updatedAt: Joi.string().isoDate().required(),
});

export const walletList = pageOf(wallet);

const transactionType = Joi.string().valid('credit', 'debit', 'transfer', 'hold', 'confirm', 'cancel', 'reversal');
const transactionStatus = Joi.string().valid('completed', 'pending', 'held', 'failed', 'canceled', 'reversed', 'confirmed');
export { transactionType, transactionStatus };

/** The answer of credit and debit (docs/reference/money.md#resources). */
export const operationResult = Joi.object({
  transactionId: Joi.string().uuid().required(),
  type: transactionType.required(),
  status: transactionStatus.required(),
  amount: Joi.number().integer().min(1).required(),
  currency: currency.required(),
  balanceAfter: balance.required(),
  createdAt: Joi.string().isoDate().required(),
});
