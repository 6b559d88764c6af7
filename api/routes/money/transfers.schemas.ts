import Joi from 'joi';
import { amount, currency, reason, walletId } from './holds.schemas';

export interface TransferBody {
  fromWalletId: string;
  toWalletId: string;
  amount: unknown;
  currency: string;
  reason: string;
}

export const transferBody = Joi.object<TransferBody>({
  fromWalletId: walletId.required(),
  toWalletId: walletId.required(),
  amount,
  currency,
  reason,
});
