import Joi from 'joi';
import { newWalletId } from '../../common/ids';
import { enqueueEvent } from '../events/publish';
import { moneyAudit } from './audit';
import { balanceView, walletView, type WalletView } from './views';
import { problems } from '../../common/problems';
import type { Answer } from '../idempotency/idempotent';
import type { DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import {
  insertWallet, isTenantMember, selectWallet, selectWallets, type Balances,
} from '../../db/queries/money/wallets.queries';
import type { AuthState } from '../../common/context';
import { decodePageToken, encodePageToken } from '../../common/pagination';
import type { PageQuery } from '../../common/pagination';
import type { MoneyDeps } from './deps';
import { callerActor, runMoneyMutation } from './mutation';

export interface NewWalletBody {
  userId: string;
  currency: string;
  label: string;
}

/**
 * POST /wallets: a wallet for a member of the tenant (a user id that is not one, another tenant's
 * included, is 404 like every foreign id). One wallet per user, currency and label (409 conflict).
 * An Idempotency-Key is honoured when sent, not required: creating an empty wallet moves no money.
 */
export async function createWallet(deps: MoneyDeps, auth: AuthState, body: NewWalletBody, key: string | undefined): Promise<Answer<WalletView>> {
  const create = async (tx: DatabaseTransactionConnection): Promise<Answer<WalletView>> => {
    if (!await isTenantMember(tx, auth.tenantId, body.userId)) throw problems.notFound('user');
    const wallet = await insertWallet(tx, { id: newWalletId(), tenantId: auth.tenantId, ...body });
    await enqueueEvent(tx, moneyAudit(callerActor(auth), 'money.wallet.created', { before: null, after: wallet }));
    return { statusCode: 201, body: walletView(wallet) };
  };
  if (key === undefined) return withTenant(deps.db, auth.tenantId, create);
  return runMoneyMutation(deps, auth, { scope: 'POST /wallets', key, request: body, requireVerifiedEmail: false }, create);
}

export interface WalletListQuery extends PageQuery {
  userId?: string;
  currency?: string;
}

const walletPosition = Joi.object<{ id: string }>({ id: Joi.string().pattern(/^[0-9A-HJKMNP-TV-Z]{26}$/) });

/** GET /wallets: the tenant's wallets in creation (ULID) order, a page at a time; filters userId and currency. */
export async function listWallets(deps: MoneyDeps, auth: AuthState, query: WalletListQuery): Promise<{ data: WalletView[]; next_page_token?: string }> {
  const after = decodePageToken(query.page_token, walletPosition);
  const rows = await withTenant(deps.db, auth.tenantId, (tx) => selectWallets(tx, {
    userId: query.userId, currency: query.currency, afterId: after?.id, limit: query.page_size + 1,
  }));
  const data = rows.slice(0, query.page_size).map(walletView);
  return rows.length > query.page_size ? { data, next_page_token: encodePageToken({ id: data[data.length - 1].id }) } : { data };
}

/** One wallet of the tenant; 404 for an unknown or another tenant's id. */
export async function getWallet(deps: MoneyDeps, auth: AuthState, walletId: string): Promise<WalletView> {
  const wallet = await withTenant(deps.db, auth.tenantId, (tx) => selectWallet(tx, auth.tenantId, walletId));
  if (!wallet) throw problems.notFound('wallet');
  return walletView(wallet);
}

export async function getBalance(deps: MoneyDeps, auth: AuthState, walletId: string): Promise<Balances> {
  return balanceView((await getWallet(deps, auth, walletId)).balance);
}
