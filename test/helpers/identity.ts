import { z } from 'zod';
import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import type { TestGateway } from './app';
import { call, type JsonResponse } from './http';

/**
 * Accounts and sessions for identity tests: every test registers its own account (a fresh e-mail
 * and tenant), so tests never share state and the shared database needs no clean-up between files.
 */

/** A password that passes the policy (12+ characters, not on the breached list). */
export const GOOD_PASSWORD = 'correct-zebra-staple-41';

export function uniqueEmail(label = 'user'): string {
  return `${label}.${newId()}@example.test`;
}

export interface RegisteredAccount {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
  user: { id: string; email: string; tenantId: string; roles: string[] } & Record<string, unknown>;
  tenant: { id: string; name: string };
  /** The 10 recovery codes registration answers once. */
  recoveryCodes: string[];
  password: string;
}

export const jsonBody = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

export function post<T = Record<string, unknown>>(gateway: TestGateway, path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1${path}`, jsonBody(body, headers));
}

export function get<T = Record<string, unknown>>(gateway: TestGateway, path: string, token?: string): Promise<JsonResponse<T>> {
  return call<T>(`${gateway.baseUrl}/v1${path}`, { headers: token ? bearer(token) : {} });
}

export async function registerAccount(gateway: TestGateway, overrides: Record<string, unknown> = {}): Promise<RegisteredAccount> {
  const body = { email: uniqueEmail(), password: GOOD_PASSWORD, firstName: 'Ada', lastName: 'Lovelace', ...overrides };
  const response = await post<RegisteredAccount>(gateway, '/auth/register', body);
  if (response.status !== 201) throw new Error(`register answered ${response.status}: ${JSON.stringify(response.body)}`);
  return { ...response.body, password: String(body.password) };
}

/**
 * Makes an existing account a member of another tenant with one of its built-in roles, as the
 * owner role: the invitation flow that does this through the API comes later.
 */
export async function addMembership(owner: DatabasePool, tenantId: string, userId: string, roleName = 'member'): Promise<void> {
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
    await tx.query(sql.unsafe`
      INSERT INTO user_roles (tenant_id, user_id, role_id)
      SELECT ${tenantId}, ${userId}, id FROM roles WHERE tenant_id = ${tenantId} AND name = ${roleName}
    `);
  });
}

/** The outbox rows of one tenant, as the owner role sees them (the relay may have published them). */
export function outboxEventsOf(owner: DatabasePool, tenantId: string) {
  return owner.any(sql.type(z.object({ type: z.string(), partitionKey: z.string(), data: z.record(z.string(), z.unknown()) }))`
    SELECT type, partition_key AS "partitionKey", data FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY seq
  `);
}
