import { Readable } from 'node:stream';
import { z } from 'zod';
import { newId } from '../../common/ids';
import { putStream, type ObjectStore } from '../../common/object-store';
import { sql, type DatabasePool } from '../../db/pool';

/** A tenant to terminate: sessions, one-time tokens, idempotency keys and objects, written as the owner role. */
export interface TerminationFixture {
  tenantId: string;
  fileKeys: string[];
  auditKey: string;
}

export async function seedTerminationTenant(owner: DatabasePool, store: ObjectStore, counts = { sessions: 3, tokens: 5, keys: 2, files: 3 }): Promise<TerminationFixture> {
  const tenantId = newId();
  const userId = newId();
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'terminated')`);
    await tx.query(sql.unsafe`INSERT INTO users (id, email) VALUES (${userId}, ${`t.${userId}@example.test`})`);
    await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
    for (let i = 0; i < counts.sessions; i += 1) {
      await tx.query(sql.unsafe`
        INSERT INTO refresh_tokens (id, family_id, user_id, tenant_id, token_hash, expires_at)
        VALUES (${newId()}, ${newId()}, ${userId}, ${tenantId}, ${sql.binary(Buffer.from(newId()))}, now() + interval '1 day')
      `);
    }
    for (let i = 0; i < counts.tokens; i += 1) {
      await tx.query(sql.unsafe`
        INSERT INTO one_time_tokens (id, purpose, token_hash, tenant_id, expires_at)
        VALUES (${newId()}, 'invite', ${sql.binary(Buffer.from(newId()))}, ${tenantId}, now() + interval '1 day')
      `);
    }
    for (let i = 0; i < counts.keys; i += 1) {
      await tx.query(sql.unsafe`
        INSERT INTO idempotency_keys (tenant_id, scope, key, request_hash, expires_at)
        VALUES (${tenantId}, 'test', ${newId()}, 'h', now() + interval '1 day')
      `);
    }
  });
  const fileKeys = Array.from({ length: counts.files }, (_, i) => `${tenantId}/files/${i}.txt`);
  const auditKey = `${tenantId}/audit/2026-01/1-2.ndjson.gz`;
  for (const key of [...fileKeys, auditKey]) await putStream(store, key, Readable.from([Buffer.from(key)]), 'text/plain');
  return { tenantId, fileKeys, auditKey };
}

export async function objectExists(store: ObjectStore, key: string): Promise<boolean> {
  try {
    await store.s3.statObject(store.bucket, key);
    return true;
  } catch {
    return false;
  }
}

export function liveSessions(owner: DatabasePool, tenantId: string): Promise<number> {
  return owner.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*) AS n FROM refresh_tokens WHERE tenant_id = ${tenantId} AND revoked_at IS NULL
  `);
}

export function tenantDeletedAt(owner: DatabasePool, tenantId: string): Promise<string | null> {
  return owner.oneFirst(sql.type(z.object({ deletedAt: z.string().nullable() }))`SELECT deleted_at AS "deletedAt" FROM tenants WHERE id = ${tenantId}`);
}
