import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';
import { outboxRowColumns, type NewOutboxEvent } from '../events/outbox.queries';
import { userTenant } from './tenants.queries';

export interface NewRefreshToken {
  id: string;
  familyId: string;
  userId: string;
  tenantId: string;
  tokenHash: Buffer;
  ttlSeconds: number;
  /** The client address and user agent of the request that issues the token (the session list shows them). */
  ip: string | null;
  userAgent: string | null;
  /** An impersonation session: who impersonates, and the moment it ends (instead of ttlSeconds). */
  impersonation?: { impersonatorId: string; endsAt: string };
}

const heldRoles = z.object({ roles: z.array(z.string()) });

/**
 * A session's refresh token stored (by hash) in its tenant, with the outbox row of the event that
 * reports it if one is given, in one statement (auth_issue_session, migrations 0021 and 0039); answers the
 * role names the user holds there now, for the access token. Called with the pool, the statement is
 * its own transaction; inside withTenant it must be the same tenant (the function refuses another).
 */
export async function insertSession(db: CommonQueryMethods, token: NewRefreshToken, event: NewOutboxEvent | null): Promise<string[]> {
  const { roles } = await db.one(sql.type(heldRoles)`
    SELECT auth_issue_session(
      ${token.tenantId}, ${token.userId}, ${token.id}, ${token.familyId}, ${sql.binary(token.tokenHash)},
      ${token.ttlSeconds}, ${token.impersonation?.endsAt ?? null}::timestamptz, ${token.impersonation?.impersonatorId ?? null},
      ${event ? sql.jsonb(outboxRowColumns(event)) : null}::jsonb, ${token.ip}::text, ${token.userAgent}::text
    ) AS roles
  `);
  return roles;
}

const signIn = z.object({
  tenants: z.array(userTenant),
  tenantId: z.string().nullable(),
  roles: z.array(z.string()).nullable(),
});
export type SignIn = z.infer<typeof signIn>;

/**
 * The end of a sign-in in one statement (auth_open_sign_in, migrations 0023 and 0039): the user's active
 * tenants and, when one is chosen (the only one, or `lastTenantId` among several), the session stored
 * in it with the event, whose tenant the statement sets. Without a choice, tenantId and roles are
 * null and nothing is written.
 */
export async function openSignIn(
  db: CommonQueryMethods, token: Omit<NewRefreshToken, 'tenantId' | 'impersonation'>, lastTenantId: string | null, event: NewOutboxEvent,
): Promise<SignIn> {
  return db.one(sql.type(signIn)`
    SELECT tenants, tenant_id AS "tenantId", roles FROM auth_open_sign_in(
      ${token.userId}, ${lastTenantId}, ${token.id}, ${token.familyId}, ${sql.binary(token.tokenHash)}, ${token.ttlSeconds},
      ${sql.jsonb(outboxRowColumns(event))}, ${token.ip}::text, ${token.userAgent}::text
    )
  `);
}

const tenantOf = z.object({ tenantId: z.string().nullable() });

/**
 * The tenant of a refresh token, found by its hash before any tenant is known (refresh, logout),
 * through the SECURITY DEFINER function auth_refresh_token_tenant of migration 0002.
 */
export async function selectRefreshTokenTenant(db: CommonQueryMethods, tokenHash: Buffer): Promise<string | null> {
  const { tenantId } = await db.one(sql.type(tenantOf)`
    SELECT auth_refresh_token_tenant(${sql.binary(tokenHash)}) AS "tenantId"
  `);
  return tenantId;
}

const storedToken = z.object({
  id: z.string(),
  familyId: z.string(),
  userId: z.string(),
  tenantId: z.string(),
  successorPair: z.instanceof(Buffer).nullable(),
  /** Seconds since rotation, measured by the database clock that also stamped it. */
  rotatedAgoSeconds: z.number().nullable(),
  /**
   * Seconds since the sign-in behind the session proved a credential. Every token of a session carries
   * that time (a rotation and a session opened from another inherit it, services/identity/sessions.ts),
   * so the token's own authenticated_at answers without reading the rest of its family (migration 0042).
   */
  sessionAgeSeconds: z.number(),
  revoked: z.boolean(),
  expired: z.boolean(),
  expiresAt: z.string(),
  impersonatorId: z.string().nullable(),
  /** When the sign-in behind the session proved a credential, in whole seconds since the epoch (migration 0042). */
  authenticatedAt: z.number(),
});
export type StoredRefreshToken = z.infer<typeof storedToken>;

/**
 * Locks the token's row for the rest of the transaction, so two refreshes with the same token run
 * one after the other: the second sees the first one's rotation and its sealed successor pair. The
 * token counts as revoked when any token of its family is: a revocation that ran beside a rotation
 * may have missed the successor row the rotation was inserting, and the session is over all the same
 * (the gateways refuse its access tokens by family, api/runtime/session-revocations.ts).
 */
export function lockRefreshToken(tx: DatabaseTransactionConnection, tokenHash: Buffer): Promise<StoredRefreshToken | null> {
  return tx.maybeOne(sql.type(storedToken)`
    SELECT id, family_id AS "familyId", user_id AS "userId", tenant_id AS "tenantId", successor_pair AS "successorPair",
           extract(epoch FROM clock_timestamp() - rotated_at)::float8 AS "rotatedAgoSeconds",
           extract(epoch FROM now() - authenticated_at)::float8 AS "sessionAgeSeconds",
           EXISTS (SELECT 1 FROM refresh_tokens f WHERE f.family_id = refresh_tokens.family_id AND f.revoked_at IS NOT NULL) AS revoked,
           expires_at <= now() AS expired,
           expires_at AS "expiresAt", impersonator_id AS "impersonatorId",
           floor(extract(epoch FROM authenticated_at))::float8 AS "authenticatedAt"
    FROM refresh_tokens WHERE token_hash = ${sql.binary(tokenHash)}
    FOR UPDATE
  `);
}

/**
 * Gives a session's new token the sign-in time it inherits (a refresh, or a session opened from another
 * one): a token stored by auth_issue_session takes the time of its statement, which is right only for
 * a sign-in (migration 0042). Runs in the transaction that stored the token.
 */
export async function setAuthenticatedAt(db: CommonQueryMethods, id: string, authenticatedAt: number): Promise<void> {
  await db.query(sql.unsafe`UPDATE refresh_tokens SET authenticated_at = to_timestamp(${authenticatedAt}) WHERE id = ${id}`);
}

export async function markRotated(tx: DatabaseTransactionConnection, id: string, successorId: string, successorPair: Buffer): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE refresh_tokens SET rotated_at = clock_timestamp(), replaced_by = ${successorId}, successor_pair = ${sql.binary(successorPair)}
    WHERE id = ${id}
  `);
}

/** Reuse detection and logout everywhere-in-a-session: every token of the family stops working. */
export async function revokeFamily(tx: DatabaseTransactionConnection, familyId: string): Promise<void> {
  await tx.query(sql.unsafe`
    UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
    WHERE family_id = ${familyId} AND revoked_at IS NULL
  `);
}
