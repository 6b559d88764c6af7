import { z } from 'zod';
import { sql, type DatabasePool } from '../../db/pool';
import type { TestGateway } from './app';
import { call, type JsonResponse } from './http';
import { addMembership, bearer, post, registerAccount, type RegisteredAccount } from './identity';

/** Helpers for the RBAC route tests: any method with a bearer token, and members of a tenant. */

export function send<T = Record<string, unknown>>(
  gateway: TestGateway, method: string, path: string, token: string, body?: unknown,
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return call<T>(`${gateway.baseUrl}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

export interface Member {
  userId: string;
  /** An access token of the member in the tenant; its role names are those of the moment it was issued. */
  token: string;
}

/** A new account made a member of the tenant with a built-in role, with a token for that tenant. */
export async function addMember(gateway: TestGateway, owner: DatabasePool, tenantId: string, roleName = 'member'): Promise<Member> {
  const account = await registerAccount(gateway);
  await addMembership(owner, tenantId, account.user.id, roleName);
  const switched = await post(gateway, '/auth/switch-tenant', { tenantId }, bearer(account.accessToken));
  if (switched.status !== 200) throw new Error(`switch-tenant answered ${switched.status}`);
  return { userId: account.user.id, token: String(switched.body.accessToken) };
}

/** The id of a tenant's built-in role, as the owner role reads it. */
export function builtInRoleId(owner: DatabasePool, tenantId: string, name: string): Promise<string> {
  return owner.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM roles WHERE tenant_id = ${tenantId} AND name = ${name}`);
}

export type { RegisteredAccount };
