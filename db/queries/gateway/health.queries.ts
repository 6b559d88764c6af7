import { z } from 'zod';
import { sql, type DatabasePool } from '../../pool';

/** The cheapest round trip to PostgreSQL. */
export async function pingDatabase(db: DatabasePool): Promise<void> {
  await db.query(sql.unsafe`SELECT 1`);
}

const readOnlySetting = z.object({ read_only: z.string() });

/** Whether transactions on this pool's connections are read-only (the reporting connection must be). */
export async function isReadOnlyConnection(db: DatabasePool): Promise<boolean> {
  const { read_only: readOnly } = await db.one(
    sql.type(readOnlySetting)`SELECT current_setting('transaction_read_only') AS read_only`,
  );
  return readOnly === 'on';
}
