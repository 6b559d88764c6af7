import type { FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { sql, type DatabaseTransactionConnection } from '../../pool';

const storedRow = z.object({ stored: z.boolean() });

export interface IdempotencyScope {
  tenantId: string;
  /** The route the key is used on: keys are scoped per tenant and route (docs/reference/conventions.md#rule-21). */
  scope: string;
  key: string;
}

export interface StoredAnswer {
  /** Hex SHA-256 of the request the key was first used with. */
  requestHash: string;
  statusCode: number;
  response: unknown;
}

const storedAnswer = z.object({ requestHash: z.string(), statusCode: z.number(), response: z.unknown() });

/** The answer stored under a key that has not expired yet (expired rows wait for the maintenance purge). */
export async function selectStoredAnswer(tx: DatabaseTransactionConnection, at: IdempotencyScope): Promise<StoredAnswer | null> {
  return tx.maybeOne(sql.type(storedAnswer)`
    SELECT request_hash AS "requestHash", response_status AS "statusCode", response_body AS response
    FROM idempotency_keys
    WHERE tenant_id = ${at.tenantId} AND scope = ${at.scope} AND key = ${at.key} AND expires_at > now()
  `);
}

/**
 * Stores the answer under the key, in one statement with `alsoWrite` (another INSERT of the same
 * transaction, run as a data-modifying CTE) when given: an expired row of the key is taken over, a
 * live one is left alone and the answer is false (the caller then rolls everything back). A
 * concurrent request with the same key waits on the primary key until this transaction ends and
 * then sees the winner's live row, so exactly one of them commits its operation (services/idempotency/idempotent.ts
 * turns the loser into a replay).
 */
export async function insertStoredAnswer(
  tx: DatabaseTransactionConnection,
  at: IdempotencyScope,
  answer: StoredAnswer,
  ttlHours: number,
  alsoWrite: FragmentSqlToken | null = null,
): Promise<boolean> {
  const stored = await tx.maybeOne(sql.type(storedRow)`
    ${alsoWrite ? sql.fragment`WITH also_written AS (${alsoWrite})` : sql.fragment``}
    INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, response_status, response_body, expires_at)
    VALUES (${at.tenantId}, ${at.scope}, ${at.key}, ${answer.requestHash}, ${answer.statusCode},
            ${sql.jsonb(answer.response as Parameters<typeof sql.jsonb>[0])}, now() + make_interval(hours => ${ttlHours}))
    ON CONFLICT (tenant_id, scope, key) DO UPDATE
      SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
          response_body = EXCLUDED.response_body, created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= now()
    RETURNING true AS stored
  `);
  return stored !== null;
}

/**
 * Holds the key until the transaction ends: a concurrent request with the same key waits here. A
 * statement of its own: in READ COMMITTED the lookup that follows takes its snapshot after the
 * lock was granted, so it sees the answer the previous holder committed.
 */
export async function lockIdempotencyKey(tx: DatabaseTransactionConnection, at: IdempotencyScope): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`idempotency:${at.tenantId}:${at.scope}:${at.key}`}, 0))`);
}
