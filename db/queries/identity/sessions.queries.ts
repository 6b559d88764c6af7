import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

/**
 * Sessions as their user sees them. A session is a refresh-token family: it starts with a login (its
 * first row) and gains a row on every refresh, each with the client of the request that made it
 * (migration 0039). Impersonation sessions are the Platform Owner's, not the user's: they are not
 * listed and cannot be ended here (they end with the impersonation).
 */

const session = z.object({
  id: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
});
export type SessionRow = z.infer<typeof session>;

/**
 * The user's live sessions in the tenant (not revoked, not past the refresh token's expiry), the most
 * recently used first: created at the first token, last used at the newest (the latest refresh), with
 * the newest token's client. At most `limit` of them.
 */
export function selectSessions(tx: DatabaseTransactionConnection, tenantId: string, userId: string, limit: number): Promise<readonly SessionRow[]> {
  return tx.any(sql.type(session)`
    SELECT family_id AS id, min(created_at) AS "createdAt", max(created_at) AS "lastUsedAt",
           (array_agg(ip ORDER BY created_at DESC))[1] AS ip, (array_agg(user_agent ORDER BY created_at DESC))[1] AS "userAgent"
    FROM refresh_tokens
    WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND impersonator_id IS NULL
    GROUP BY family_id
    HAVING bool_and(revoked_at IS NULL) AND max(expires_at) > now()
    ORDER BY max(created_at) DESC, family_id
    LIMIT ${limit}
  `);
}

const ended = z.object({ sessions: z.number() });

/**
 * Ends sessions of the user in the tenant: the one named by `only`, or every one but `except`.
 * Answers how many live sessions it ended; the trigger of migration 0039 announces each.
 */
export async function endSessions(
  tx: DatabaseTransactionConnection, tenantId: string, userId: string, which: { only: string } | { except: string | null },
): Promise<number> {
  const family = 'only' in which ? sql.fragment`family_id = ${which.only}` : sql.fragment`family_id IS DISTINCT FROM ${which.except}`;
  const { sessions } = await tx.one(sql.type(ended)`
    WITH revoked AS (
      UPDATE refresh_tokens SET revoked_at = now(), successor_pair = NULL
      WHERE tenant_id = ${tenantId} AND user_id = ${userId} AND impersonator_id IS NULL AND revoked_at IS NULL AND ${family}
      RETURNING family_id
    )
    SELECT count(DISTINCT family_id)::integer AS sessions FROM revoked
  `);
  return sessions;
}

const live = z.object({ live: z.boolean() });

/**
 * Whether the session may still be used: it has tokens and none of them was revoked (a revocation
 * ends the whole family; lockRefreshToken reads it the same way). The gateway asks per request only
 * while it does not hear the announcements (api/runtime/session-revocations.ts).
 */
export async function isSessionLive(tx: DatabaseTransactionConnection, tenantId: string, sessionId: string): Promise<boolean> {
  const row = await tx.one(sql.type(live)`
    SELECT coalesce(bool_and(revoked_at IS NULL), false) AS live
    FROM refresh_tokens WHERE tenant_id = ${tenantId} AND family_id = ${sessionId}
  `);
  return row.live;
}

const revokedId = z.object({ id: z.string() });

/**
 * The sessions of every tenant that ended within the last `seconds` (SECURITY DEFINER
 * auth_revoked_sessions, migration 0039): what a gateway that starts, or listens again after a gap,
 * must refuse although it heard no announcement of it.
 */
export async function selectRecentlyEndedSessions(db: CommonQueryMethods, seconds: number): Promise<string[]> {
  const rows = await db.any(sql.type(revokedId)`SELECT id FROM auth_revoked_sessions(${seconds}) AS id`);
  return rows.map((row) => row.id);
}
