import Joi from 'joi';
import { uuid } from '../../http/ids';
import { cursorQuery, pageQuery } from '../../http/pagination';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../../../common/pagination';
import { balance, currency, transactionStatus, transactionType, walletId } from './wallets.schemas';

/** Request and response schemas of the transaction routes (history, one transaction). */

export interface TransactionIdParams {
  id: string;
}

export const transactionIdParams = Joi.object<TransactionIdParams>({ id: uuid.required() });

export const transaction = Joi.object({
  id: Joi.string().uuid().required(),
  walletId: walletId.required(),
  type: transactionType.required(),
  status: transactionStatus.required(),
  amount: Joi.number().integer().min(1).required(),
  currency: currency.required(),
  reason: Joi.string().allow('').required(),
  idempotencyKey: Joi.string().allow(null).required(),
  referenceTransactionId: Joi.string().uuid().allow(null).required(),
  reversed: Joi.boolean().required(),
  meta: Joi.object().unknown(true).required(),
  balanceAfter: balance.required(),
  createdAt: Joi.string().isoDate().required(),
  counterpartyWalletId: walletId,
  expiresAt: Joi.string().isoDate(),
});

export interface HistoryQuery {
  type?: string;
  status?: string;
  since?: string;
  until?: string;
  page_size?: number;
  page_token?: string;
  limit?: number;
  cursor?: string;
}

export interface HistoryAQuery extends HistoryQuery {
  walletId: string;
}

/** No defaults here: which pair the caller used picks the envelope (docs/decisions/audit.md, Reading records). */
const size = Joi.number().integer().min(1).max(PAGE_SIZE_MAX);
const history = {
  type: transactionType,
  status: transactionStatus,
  since: Joi.string().isoDate().description('Inclusive lower bound of createdAt'),
  until: Joi.string().isoDate().description('Exclusive upper bound of createdAt'),
  page_size: size.description(`Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, next_page_token}`),
  page_token: pageQuery.page_token,
  limit: size.description(`Items per page (1 to ${PAGE_SIZE_MAX}, default ${PAGE_SIZE_DEFAULT}); answers {data, meta {cursor, hasMore}}; not with page_size or page_token`),
  cursor: cursorQuery.cursor,
};

/** The two pairs do not mix. */
const onePair = (schema: Joi.ObjectSchema) => schema
  .without('limit', ['page_size', 'page_token'])
  .without('cursor', ['page_size', 'page_token']);

export const historyAQuery = onePair(Joi.object<HistoryAQuery>({ walletId: walletId.required(), ...history }));
export const historyBQuery = onePair(Joi.object<HistoryQuery>(history));

export const historyResponse = Joi.alternatives().try(
  Joi.object({ data: Joi.array().items(transaction).required(), next_page_token: Joi.string() }),
  Joi.object({
    data: Joi.array().items(transaction).required(),
    meta: Joi.object({ cursor: Joi.string().allow(null).required(), hasMore: Joi.boolean().required() }).required(),
  }),
);
