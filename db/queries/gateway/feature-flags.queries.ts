import { z } from 'zod';
import { sql, type DatabasePool } from '../../pool';

const flagRow = z.object({ key: z.string(), enabled: z.boolean() });
export type FlagRow = z.infer<typeof flagRow>;

/**
 * The global flags (tenant_id NULL). Row-level security lets the application role read them
 * without a tenant set; per-tenant overrides are read inside the tenant's own transaction.
 */
export async function listGlobalFlags(db: DatabasePool): Promise<readonly FlagRow[]> {
  return db.any(sql.type(flagRow)`SELECT key, enabled FROM feature_flags WHERE tenant_id IS NULL`);
}
