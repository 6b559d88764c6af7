import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';

/** A JSON call to the gateway's API that must succeed, with a bearer token and an Idempotency-Key when given. */
export type MoneyApi = (method: string, path: string, body: unknown, token?: string, key?: string) => Promise<Record<string, any>>;

export function moneyApi(baseUrl: string): MoneyApi {
  return async (method, path, body, token, key) => {
    const response = await fetch(`${baseUrl}/v1${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body),
    });
    const json = await response.json() as Record<string, any>;
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };
}

export interface BenchAccount {
  tenantId: string;
  userId: string;
  token: string;
}

/** A new tenant whose owner may move money (a verified e-mail, as redeeming the e-mailed link gives). */
export async function verifiedAccount(api: MoneyApi, owner: DatabasePool): Promise<BenchAccount> {
  const account = await api('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
  await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${account.user.id}`);
  return { tenantId: account.tenant.id, userId: account.user.id, token: account.accessToken };
}

/** A wallet of the account's owner labelled `label`, credited with `amount` through the API. */
export async function fundedWallet(api: MoneyApi, account: BenchAccount, label: string, amount: number): Promise<string> {
  const { id } = await api('POST', '/wallets', { userId: account.userId, currency: 'USD', label }, account.token);
  await api('POST', `/wallets/${id}/credit`, { amount }, account.token, newId());
  return id;
}
