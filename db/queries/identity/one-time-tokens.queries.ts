import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql, type DatabaseTransactionConnection } from '../../pool';

const expiresAtRow = z.object({ expiresAt: z.string() });

export type OneTimeTokenPurpose = 'verify_email' | 'reset_password' | 'invite' | 'set_password';

export interface NewOneTimeToken {
  id: string;
  purpose: OneTimeTokenPurpose;
  tokenHash: Buffer;
  userId: string | null;
  tenantId: string;
  email: string;
  payload: Record<string, unknown>;
  ttlSeconds: number;
}

/** Stores a token's hash (never the token) and answers when it expires, by the database clock. */
export async function insertOneTimeToken(tx: DatabaseTransactionConnection, token: NewOneTimeToken): Promise<string> {
  const { expiresAt } = await tx.one(sql.type(expiresAtRow)`
    INSERT INTO one_time_tokens (id, purpose, token_hash, user_id, tenant_id, email, payload, expires_at)
    VALUES (${token.id}, ${token.purpose}, ${sql.binary(token.tokenHash)}, ${token.userId}, ${token.tenantId},
            ${token.email}, ${sql.jsonb(token.payload)}, now() + make_interval(secs => ${token.ttlSeconds}))
    RETURNING expires_at AS "expiresAt"
  `);
  return expiresAt;
}

const tenantOf = z.object({ tenantId: z.string().nullable() });

/**
 * The tenant a token was issued in, found by its hash before any tenant is set (one_time_tokens is
 * not tenant-owned). Null for an unknown, used or other-purpose token.
 */
export async function selectOneTimeTokenTenant(
  db: CommonQueryMethods,
  tokenHash: Buffer,
  purposes: readonly OneTimeTokenPurpose[],
): Promise<string | null> {
  const row = await db.maybeOne(sql.type(tenantOf)`
    SELECT tenant_id AS "tenantId" FROM one_time_tokens
    WHERE token_hash = ${sql.binary(tokenHash)} AND purpose = ANY(${sql.array(purposes, 'text')})
  `);
  return row?.tenantId ?? null;
}

const consumed = z.object({
  id: z.string(),
  purpose: z.enum(['verify_email', 'reset_password', 'invite', 'set_password']),
  tokenHash: z.instanceof(Buffer),
  userId: z.string().nullable(),
  tenantId: z.string(),
  email: z.string(),
  payload: z.record(z.string(), z.unknown()),
  expired: z.boolean(),
});
export type ConsumedOneTimeToken = z.infer<typeof consumed>;

/**
 * Deletes the token and answers what it was, in one statement: of two requests redeeming the same
 * token at once, the second waits for the first one's row lock and then finds nothing, so a token
 * works once. Expired tokens are deleted too; the caller rolls back when it refuses one.
 */
export function deleteOneTimeToken(
  tx: DatabaseTransactionConnection,
  tokenHash: Buffer,
  purposes: readonly OneTimeTokenPurpose[],
): Promise<ConsumedOneTimeToken | null> {
  return tx.maybeOne(sql.type(consumed)`
    DELETE FROM one_time_tokens
    WHERE token_hash = ${sql.binary(tokenHash)} AND purpose = ANY(${sql.array(purposes, 'text')})
      AND tenant_id = current_tenant_id()
    RETURNING id, purpose, token_hash AS "tokenHash", user_id AS "userId", tenant_id AS "tenantId", email, payload,
              expires_at <= now() AS expired
  `);
}
