import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import type { TestGateway } from './app';
import { call, type JsonResponse } from './http';
import { bearer, registerAccount, type RegisteredAccount } from './identity';

/**
 * Money scenarios through the real gateway: an account whose owner has a verified e-mail and a
 * wallet, and one-line calls of the money routes. Every scenario registers its own account (its own
 * tenant), so tests never share wallets.
 */

export interface Wallet {
  id: string;
  userId: string;
  currency: string;
  label: string;
  balance: { available: number; pending: number; frozen: number };
  [field: string]: unknown;
}

/** An answer the test reads member by member, as the route's own schema already checked it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loose on purpose: tests assert the values, not the types
type LooseBody = Record<string, any>;

export interface MoneyAccount extends RegisteredAccount {
  wallet: Wallet;
}

/** Marks the account's e-mail verified, as redeeming the e-mailed link does (test/api/identity/email-verification.test.ts). */
export async function verifyEmail(owner: DatabasePool, userId: string): Promise<void> {
  await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${userId}`);
}

/** A fresh tenant whose owner has a verified e-mail and one wallet (USD unless told otherwise). */
export async function moneyAccount(gateway: TestGateway, owner: DatabasePool, currency = 'USD'): Promise<MoneyAccount> {
  const account = await registerAccount(gateway);
  await verifyEmail(owner, account.user.id);
  const wallet = await createWallet(gateway, account.accessToken, { userId: account.user.id, currency, label: 'main' });
  if (wallet.status !== 201) throw new Error(`POST /wallets answered ${wallet.status}: ${JSON.stringify(wallet.body)}`);
  return { ...account, wallet: wallet.body };
}

export function send<T = LooseBody>(
  gateway: TestGateway, method: string, path: string, token: string | undefined, body?: unknown, headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1${path}`, {
    method,
    headers: { ...(token ? bearer(token) : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
}

export function createWallet(gateway: TestGateway, token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return send<Wallet>(gateway, 'POST', '/wallets', token, body, headers);
}

/** A money mutation with an Idempotency-Key (a fresh one unless given). */
export function mutate<T = LooseBody>(
  gateway: TestGateway, token: string, path: string, body: unknown, key: string = newId(),
): Promise<JsonResponse<T>> {
  return send<T>(gateway, 'POST', path, token, body, { 'idempotency-key': key });
}

export function credit(gateway: TestGateway, account: MoneyAccount, amount: unknown, key?: string, walletId = account.wallet.id) {
  return mutate(gateway, account.accessToken, `/wallets/${walletId}/credit`, { amount, currency: 'USD', reason: 'top-up' }, key);
}

export function debit(gateway: TestGateway, account: MoneyAccount, amount: unknown, key?: string, walletId = account.wallet.id) {
  return mutate(gateway, account.accessToken, `/wallets/${walletId}/debit`, { amount, currency: 'USD', reason: 'purchase' }, key);
}

export async function balanceOf(gateway: TestGateway, account: MoneyAccount, walletId = account.wallet.id) {
  return (await send<Wallet['balance']>(gateway, 'GET', `/wallets/${walletId}/balance`, account.accessToken)).body;
}
