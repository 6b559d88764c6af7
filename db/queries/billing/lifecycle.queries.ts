import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { sql } from '../../pool';

/**
 * Reads of the subscription workflow's activities (application role, inside the tenant's transaction, so
 * row-level security would hold as well).
 */

const email = z.object({ email: z.string() });

/** Who billing notices go to: the tenant's owners (active, non-deleted members holding the owner role). */
export async function selectOwnerEmails(db: CommonQueryMethods, tenantId: string): Promise<string[]> {
  const rows = await db.any(sql.type(email)`
    SELECT DISTINCT u.email
    FROM user_roles ur
    JOIN roles r ON r.id = ur.role_id AND r.tenant_id = ${tenantId} AND r.name = 'owner'
    JOIN memberships m ON m.tenant_id = ur.tenant_id AND m.user_id = ur.user_id AND m.status = 'active'
    JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL
    WHERE ur.tenant_id = ${tenantId}
    ORDER BY u.email
  `);
  return rows.map((row) => row.email);
}
