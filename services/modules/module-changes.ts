import { isDeepStrictEqual } from 'node:util';
import { recordAudit } from '../audit/writer';
import { currentRequestContext } from '../../common/context';
import { enqueueEvent } from '../events/publish';
import type { DatabaseTransactionConnection } from '../../db/pool';
import type { TenantModuleRow } from '../../db/queries/modules/tenant-modules.queries';
import type { Actor } from '../../common/context';

export const MODULE_EVENT_PREFIX = 'module.registry.';

/** The module.registry.* event types (docs/reference/modules.md, Events; the types are chosen in docs/decisions/modules.md). */
export type ModuleChangeKind = 'installed' | 'updated' | 'uninstalled';

export interface ModuleChange {
  tenantId: string;
  actor: Actor;
  kind: ModuleChangeKind;
  /** The tenant's row before the change (null on a first install) and after it. */
  before: TenantModuleRow | null;
  after: TenantModuleRow;
}

const isInstalled = (row: TenantModuleRow | null) => row !== null && row.deletedAt === null;

const snapshot = (row: TenantModuleRow | null) => row && {
  slug: row.slug, version: row.version, status: row.status, config: row.config, installed: isInstalled(row),
};

/** What an `updated` change changed, by field name. */
function changedFields(before: TenantModuleRow | null, after: TenantModuleRow): string[] {
  if (!before) return [];
  const fields: string[] = [];
  if (before.version !== after.version) fields.push('version');
  if (before.status !== after.status) fields.push('status');
  if (!isDeepStrictEqual(before.config, after.config)) fields.push('config');
  return fields;
}

/**
 * Writes, in the transaction of the change, the event `module.registry.<kind>` to
 * platform.module.events (keyed by module_id, the tenant's installation id, as the topic
 * catalogue of docs/reference/events.md, Events says) and the audit record of the same action. The payload
 * says which module, its version and status after the change, who changed it, whether an install was a
 * reinstall, and which fields an update changed; a configuration's values stay out of the event (they may be
 * secrets) and are kept in the audit record's snapshots. Gateways drop their cached installed
 * modules of the tenant on any of these events.
 */
export async function recordModuleChange(tx: DatabaseTransactionConnection, change: ModuleChange): Promise<void> {
  const { after, before } = change;
  const traceId = currentRequestContext()?.traceId;
  const type = `${MODULE_EVENT_PREFIX}${change.kind}`;
  const reinstalled = change.kind === 'installed' && before !== null;
  const changes = change.kind === 'updated' ? changedFields(before, after) : [];
  await enqueueEvent(tx, {
    tenantId: change.tenantId,
    type,
    source: 'module-registry',
    key: after.id,
    data: {
      module_id: after.id,
      slug: after.slug,
      version: after.version,
      status: after.status,
      installed: isInstalled(after),
      tenant_id: change.tenantId,
      changed_by: change.actor.userId,
      ...(change.kind === 'installed' ? { reinstalled } : {}),
      ...(change.kind === 'updated' ? { changes, previous_status: before?.status ?? null, previous_version: before?.version ?? null } : {}),
    },
    traceId,
  });
  await recordAudit(tx, {
    tenantId: change.tenantId,
    source: 'module-registry',
    action: type,
    entityType: 'module',
    entityId: after.id,
    actorId: change.actor.userId,
    actorIp: change.actor.ip,
    actorUserAgent: change.actor.userAgent,
    before: snapshot(before),
    after: snapshot(after),
    meta: change.kind === 'installed' ? { reinstalled } : change.kind === 'updated' ? { changes } : null,
    traceId,
  });
}
