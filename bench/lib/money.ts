import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';

/**
 * A JSON call to the gateway's API that must succeed, with a bearer token and an Idempotency-Key when
 * given. `T` is the answer's shape as the caller reads it (the bench trusts the gateway's schemas).
 */
export type MoneyApi = <T = unknown>(method: string, path: string, body: unknown, token?: string, key?: string) => Promise<T>;

/** An answer of the gateway, whatever its status: what a bench of refusals (429, 202) counts. */
export interface MoneyAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type MoneyCall = (method: string, path: string, body: unknown, token?: string, key?: string) => Promise<MoneyAnswer>;

/**
 * The load generator's client: node:http over kept-alive connections, which costs the bench process
 * about half the CPU per request of fetch; on a machine of two cores the client competes with the
 * gateway and PostgreSQL it measures (pgbench's own client is C). Idle sockets are dropped after 4 s,
 * before the server's keep-alive timeout (Node's 5 s) closes them under a request; a request that
 * still meets a reused socket closing is sent once more, as Node's documentation advises.
 */
export function moneyCall(baseUrl: string): MoneyCall {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1024, timeout: 4000 });
  const call: MoneyCall = (method, path, body, token, key) => new Promise<MoneyAnswer>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const request = httpRequest({
      host: url.hostname, port: url.port, path: `/v1${path}`, method, agent,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(key ? { 'idempotency-key': key } : {}),
      },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
        } catch (error) {
          reject(error);
        }
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (request.reusedSocket && error.code === 'ECONNRESET') call(method, path, body, token, key).then(resolve, reject);
      else reject(error);
    });
    request.end(payload);
  });
  return call;
}

/** moneyCall for calls that must succeed: any other status than 2xx rejects with the answer. */
export function moneyApi(baseUrl: string): MoneyApi {
  const call = moneyCall(baseUrl);
  return async <T>(method: string, path: string, body: unknown, token?: string, key?: string) => {
    const { status, body: answer } = await call(method, path, body, token, key);
    if (status < 200 || status >= 300) throw new Error(`${method} ${path} answered ${status}: ${JSON.stringify(answer)}`);
    return answer as T;
  };
}

export interface BenchAccount {
  tenantId: string;
  userId: string;
  email: string;
  token: string;
}

/** The password of every bench account. */
export const BENCH_PASSWORD = 'bench-passphrase-of-some-length';

/** A new tenant whose owner may move money (a verified e-mail, as redeeming the e-mailed link gives). */
export async function verifiedAccount(api: MoneyApi, owner: DatabasePool): Promise<BenchAccount> {
  const email = `bench.${newId()}@example.test`;
  const account = await api<{ user: { id: string }; tenant: { id: string }; accessToken: string }>('POST', '/auth/register', { email, password: BENCH_PASSWORD });
  await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${account.user.id}`);
  return { tenantId: account.tenant.id, userId: account.user.id, email, token: account.accessToken };
}

/** A wallet of the account's owner labelled `label`, credited with `amount` through the API. */
export async function fundedWallet(api: MoneyApi, account: BenchAccount, label: string, amount: number): Promise<string> {
  const { id } = await api<{ id: string }>('POST', '/wallets', { userId: account.userId, currency: 'USD', label }, account.token);
  await api('POST', `/wallets/${id}/credit`, { amount }, account.token, newId());
  return id;
}
