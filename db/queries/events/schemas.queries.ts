import { z } from 'zod';
import { sql, type DatabasePool, type DatabaseTransactionConnection } from '../../pool';

/**
 * The event schema registry (table event_schemas, migration 0032): platform-wide, so these run on
 * the pool or in any transaction, with no tenant setting.
 */

const registeredSchema = z.object({
  type: z.string(),
  version: z.string(),
  schema: z.record(z.string(), z.unknown()),
  owner: z.string(),
});
export type RegisteredSchemaRow = z.infer<typeof registeredSchema>;

const CURRENT = sql.fragment`
  SELECT DISTINCT ON (type) type, major || '.' || minor || '.' || patch AS version, schema, owner
  FROM event_schemas
`;

/**
 * Takes the registration lock of each type until the transaction ends, in one order (no two
 * registrations can deadlock), so two installs of one module cannot both judge a change against
 * the same current version.
 */
export async function lockSchemaTypes(tx: DatabaseTransactionConnection, types: readonly string[]): Promise<void> {
  await tx.query(sql.unsafe`
    SELECT pg_advisory_xact_lock(hashtextextended('event_schemas:' || t, 0))
    FROM unnest(${sql.array([...types], 'text')}) AS t ORDER BY t
  `);
}

/** The current (highest) version of each of the types that has one. */
export function selectCurrentSchemas(db: DatabasePool | DatabaseTransactionConnection, types: readonly string[]): Promise<readonly RegisteredSchemaRow[]> {
  return db.any(sql.type(registeredSchema)`
    ${CURRENT}
    WHERE type = ANY (${sql.array([...types], 'text')})
    ORDER BY type, major DESC, minor DESC, patch DESC
  `);
}

export interface NewSchemaVersion {
  type: string;
  major: number;
  minor: number;
  patch: number;
  schema: Record<string, unknown>;
  owner: string;
}

export async function insertSchemaVersions(tx: DatabaseTransactionConnection, rows: readonly NewSchemaVersion[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(sql.unsafe`
    INSERT INTO event_schemas (type, major, minor, patch, schema, owner)
    SELECT * FROM jsonb_to_recordset(${sql.jsonb(rows as never)})
      AS r(type text, major integer, minor integer, patch integer, schema jsonb, owner text)
  `);
}
