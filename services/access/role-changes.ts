import { recordAudit } from '../audit/writer';
import { currentRequestContext, type Actor } from '../../common/context';
import { enqueueEvent } from '../events/publish';
import type { DatabaseTransactionConnection } from '../../db/pool';
import type { RoleRow } from '../../db/queries/access/roles.queries';

export type RoleChangeKind = 'created' | 'updated' | 'deleted' | 'assigned' | 'revoked';

export interface RoleChange {
  tenantId: string;
  actor: Actor;
  kind: RoleChangeKind;
  /**
   * The role before the change (null on creation and assignment) and after it (null on deletion and
   * revocation): an assignment moves the user from no role to `after`, a revocation from `before` to none.
   */
  before: RoleRow | null;
  after: RoleRow | null;
  /** The user a role was assigned to or revoked from. */
  userId?: string;
}

const snapshot = (role: RoleRow | null) => role && {
  id: role.id, name: role.name, description: role.description, permissions: role.permissions, builtIn: role.builtIn,
};

/**
 * Writes, in the transaction of the change, `auth.role.changed` (docs/reference/access.md#events) to
 * the outbox and the audit record `auth.role.<kind>`. The event's documented fields say who lost
 * and gained which role: for an assignment previous_role is null and new_role the role's name, for
 * a revocation the other way round; for a change of the role itself user_id is null and the two
 * fields carry its name before and after. The fields after tenant_id (beyond its schema in services/events/kernel-schemas.ts) add
 * what a consumer needs without reading the database: the kind of change, the role id and its
 * permissions. Gateways drop their cached permissions of the tenant on it. Keyed by the user id
 * (the topic's partition key), or by the role id when no single user is concerned.
 */
export async function recordRoleChange(tx: DatabaseTransactionConnection, change: RoleChange): Promise<void> {
  const role = (change.after ?? change.before)!;
  const traceId = currentRequestContext()?.traceId;
  const assignment = change.kind === 'assigned' || change.kind === 'revoked';
  await enqueueEvent(tx, {
    tenantId: change.tenantId,
    type: 'auth.role.changed',
    source: 'identity',
    key: change.userId ?? role.id,
    data: {
      user_id: change.userId ?? null,
      previous_role: change.before?.name ?? null,
      new_role: change.after?.name ?? null,
      changed_by: change.actor.userId,
      tenant_id: change.tenantId,
      change: change.kind,
      role_id: role.id,
      permissions: change.after?.permissions ?? null,
      previous_permissions: change.before?.permissions ?? null,
    },
    traceId,
  });
  await recordAudit(tx, {
    tenantId: change.tenantId,
    source: 'identity',
    action: `auth.role.${change.kind}`,
    entityType: 'role',
    entityId: role.id,
    actorId: change.actor.userId,
    actorIp: change.actor.ip,
    actorUserAgent: change.actor.userAgent,
    before: assignment ? null : snapshot(change.before),
    after: assignment ? null : snapshot(change.after),
    meta: assignment ? { userId: change.userId, roleName: role.name } : null,
    traceId,
  });
}
