import { z } from 'zod';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { hashPassword } from '../../services/identity/passwords';
import { sql, type DatabasePool } from '../../db/pool';
import type { TestGateway } from './app';
import { call, type JsonResponse } from './http';
import { bearer, GOOD_PASSWORD, post, uniqueEmail } from './identity';

/** Helpers for the user-administration and impersonation tests. */

export interface Member {
  id: string;
  email: string;
  password: string;
}

let passwordHash: Promise<string> | undefined;

/**
 * An account whose only tenant is `tenantId`, holding one built-in role there, written as the owner
 * role: creating users through the API (POST /users, invitations) is another flow's subject.
 */
export async function createMember(owner: DatabasePool, tenantId: string, roleName: 'admin' | 'member' | 'owner' = 'member'): Promise<Member> {
  passwordHash ??= hashPassword(config().identity.passwordPepper, GOOD_PASSWORD);
  const member = { id: newId(), email: uniqueEmail(roleName), password: GOOD_PASSWORD };
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`
      INSERT INTO users (id, email, password_hash, first_name, last_name)
      VALUES (${member.id}, ${member.email}, ${await passwordHash!}, 'Grace', 'Hopper')
    `);
    await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${member.id})`);
    await tx.query(sql.unsafe`
      INSERT INTO user_roles (tenant_id, user_id, role_id)
      SELECT ${tenantId}, ${member.id}, id FROM roles WHERE tenant_id = ${tenantId} AND name = ${roleName}
    `);
  });
  return member;
}

export interface Session {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
}

/** Logs in with the password; throws unless a token pair comes back. */
export async function login(gateway: TestGateway, who: { email: string; password: string }): Promise<Session> {
  const response = await post<Session>(gateway, '/auth/login', { email: who.email, password: who.password });
  if (response.status !== 200 || !response.body.accessToken) throw new Error(`login answered ${response.status}: ${JSON.stringify(response.body)}`);
  return response.body;
}

/** A request with any method and an optional JSON body, under /v1. */
export function send<T = Record<string, unknown>>(
  gateway: TestGateway,
  method: 'GET' | 'PATCH' | 'DELETE' | 'POST' | 'PUT',
  path: string,
  token?: string,
  body?: unknown,
): Promise<JsonResponse<T>> {
  const headers = { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return call<T>(`${gateway.baseUrl}/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const outboxRow = z.object({ type: z.string(), partitionKey: z.string(), data: z.record(z.string(), z.unknown()) });

/** The outbox rows of one tenant and type, oldest first, as the owner role sees them. */
export function outboxOfType(owner: DatabasePool, tenantId: string, type: string) {
  return owner.any(sql.type(outboxRow)`
    SELECT type, partition_key AS "partitionKey", data FROM outbox_events
    WHERE tenant_id = ${tenantId} AND type = ${type} ORDER BY seq
  `);
}

/** The audit records (outbox events audit.record.created) of one tenant with the given action. */
export async function auditRecordsOf(owner: DatabasePool, tenantId: string, action: string) {
  const rows = await outboxOfType(owner, tenantId, 'audit.record.created');
  return rows.map((row) => row.data).filter((data) => data.action === action);
}
