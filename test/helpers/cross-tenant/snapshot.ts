import { z } from 'zod';
import { sql, type DatabasePool } from '../../../db/pool';
import { waitFor } from '../http';

/**
 * A tenant's rows in PostgreSQL, table by table (count and an md5 of the rows in a fixed order), read
 * by the owner role, which row-level security does not filter: every table with a tenant_id column
 * (partitioned tables once, as their parent), the tenant's own row, and its members' users rows
 * (users are shared by tenants and carry no tenant_id).
 */
export type Snapshot = Record<string, { rows: number; md5: string }>;

/**
 * Tables whose rows of the tenant change with no request of another tenant, left out, each with its
 * reason. Everything else the seeding set off (the scan, the processing job, the audit consumer) has
 * settled before the first snapshot (settledSnapshot).
 */
export const CHANGING_WITHOUT_REQUESTS: Readonly<Record<string, string>> = {
  outbox_events: 'the outbox relay marks the tenant\'s own events published',
};

const tableRow = z.object({ name: z.string() });
const digestRow = z.object({ rows: z.number(), md5: z.string() });

/** Every table of the public schema with a tenant_id column, partitions counted through their parent. */
function tenantTables(owner: DatabasePool): Promise<readonly string[]> {
  return owner.anyFirst(sql.type(tableRow)`
    SELECT c.relname AS name
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
    WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
    ORDER BY c.relname
  `);
}

function digest(owner: DatabasePool, table: string, column: string, values: readonly string[]) {
  return owner.one(sql.type(digestRow)`
    SELECT count(*)::int AS rows, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS md5
    FROM ${sql.identifier([table])} t WHERE ${sql.identifier([column])}::text = ANY(${sql.array(values, 'text')})
  `);
}

export async function snapshotTenant(owner: DatabasePool, tenantId: string): Promise<Snapshot> {
  const tables = (await tenantTables(owner)).filter((table) => !(table in CHANGING_WITHOUT_REQUESTS));
  const userIds = await owner.anyFirst(sql.type(z.object({ userId: z.string() }))`
    SELECT user_id::text AS "userId" FROM memberships WHERE tenant_id = ${tenantId}
  `);
  const snapshot: Snapshot = {};
  for (const table of tables) snapshot[table] = await digest(owner, table, 'tenant_id', [tenantId]);
  snapshot.tenants = await digest(owner, 'tenants', 'id', [tenantId]);
  snapshot.users = await digest(owner, 'users', 'id', userIds);
  return snapshot;
}

/** The tables whose digest differs between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((table) => JSON.stringify(before[table]) !== JSON.stringify(after[table]))
    .sort();
}

/**
 * The tenant's snapshot once the work its seeding started has settled (the scan, the processing job,
 * the audit consumer): two snapshots in a row alike.
 */
export async function settledSnapshot(owner: DatabasePool, tenantId: string, timeoutMs = 60_000): Promise<Snapshot> {
  let previous = await snapshotTenant(owner, tenantId);
  await waitFor(`tenant ${tenantId}'s rows to settle`, async () => {
    const current = await snapshotTenant(owner, tenantId);
    const settled = changedTables(previous, current).length === 0;
    previous = current;
    return settled;
  }, timeoutMs, 1000);
  return previous;
}
