import Joi from 'joi';
import { currency, reason, walletId } from './holds.schemas';
import { amount } from './wallets.schemas';

export interface TransferBody {
  fromWalletId: string;
  toWalletId: string;
  amount: number;
  currency: string;
  reason: string;
}

export const transferBody = Joi.object<TransferBody>({
  fromWalletId: walletId.required(),
  toWalletId: walletId.required(),
  amount,
  currency,
  reason,
}).or('amount').messages({ 'object.missing': 'amount is required' });
