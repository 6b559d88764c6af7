import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import type { AuditRecord } from '../../services/audit/record';
import { newId } from '../../common/ids';
import { repoRoot } from '../../common/paths';
import { sql, type DatabasePool } from '../../db/pool';
import { sqlState } from '../../db/retry';
import { withTenant } from '../../db/tenant';
import { insertBufferedAuditEvents } from '../../db/queries/audit/audit-fallback.queries';
import { AuditStore } from '../../services/audit/store';
import { verifyTenantChain } from '../../services/audit/verify';
import { createAuditDatabase, type AuditDatabase } from '../helpers/audit';

/**
 * The audit store on a scratch database: the hash chain under concurrent writers, exactly-once
 * storage of redelivered records, append-only enforcement, detection of forged changes, and
 * row-level security for the application role.
 */

jest.setTimeout(60_000);

let db: AuditDatabase;
let store: AuditStore;

beforeAll(async () => {
  db = await createAuditDatabase('platform_audit_store_test');
  store = new AuditStore(db.owner);
});

afterAll(async () => {
  await db?.close();
});

let clock = Date.parse('2026-05-17T10:00:00.000Z');

function recordOf(tenantId: string, overrides: Partial<AuditRecord> = {}): AuditRecord {
  clock += 1;
  return {
    id: newId(), tenantId, action: 'crm.contact.updated', entityType: 'contact', entityId: newId(),
    actorId: newId(), actorIp: '198.51.100.4', actorUserAgent: 'jest', impersonatorId: null,
    before: { name: 'Ada' }, after: { name: 'Ada L.' }, meta: { n: clock }, traceId: null,
    timestamp: new Date(clock).toISOString(), ...overrides,
  };
}

const recordsOf = (tenantId: string, count: number) => Array.from({ length: count }, () => recordOf(tenantId));

const seqsOf = (tenantId: string) => db.owner.anyFirst(sql.type(z.object({ seq: z.number() }))`
  SELECT seq FROM audit_records WHERE tenant_id = ${tenantId} ORDER BY seq
`);

/** Runs statements as the owner with the append-only trigger switched off: what a superuser could do. */
function forge(statement: ReturnType<typeof sql.unsafe>): Promise<void> {
  return db.owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`ALTER TABLE audit_records DISABLE TRIGGER audit_records_append_only`);
    await tx.query(statement);
    await tx.query(sql.unsafe`ALTER TABLE audit_records ENABLE TRIGGER audit_records_append_only`);
  });
}

/** The command line, run from the sources against the scratch database. */
function verifyCli(tenantId: string) {
  const result = spawnSync(process.execPath, [
    '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'workers/audit-verify.ts'),
    '--tenant', tenantId, '--database-url', db.appUrl,
  ], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: result.status, out: result.stdout + result.stderr };
}

describe('the hash chain', () => {
  it('stays gapless and sound under concurrent writers with overlapping tenants', async () => {
    const tenants = [newId(), newId(), newId()];
    // Twelve batches at once, each touching two of the three tenants, as consumers of several
    // partitions would.
    const batches = Array.from({ length: 12 }, (_, i) => [
      ...recordsOf(tenants[i % 3], 25), ...recordsOf(tenants[(i + 1) % 3], 25),
    ]);
    const results = await Promise.all(batches.map((batch) => store.append(batch)));
    expect(results.reduce((sum, r) => sum + r.stored, 0)).toBe(600);
    for (const tenantId of tenants) {
      expect(await seqsOf(tenantId)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
      expect(await verifyTenantChain(db.app, tenantId, { pageSize: 64 })).toEqual({ ok: true, tenantId, records: 200, archived: 0, archivesRead: 0 });
    }
  });

  it('stores a redelivered record once and leaves the chain as it was', async () => {
    const tenantId = newId();
    const batch = recordsOf(tenantId, 5);
    expect(await store.append(batch)).toEqual({ stored: 5, duplicates: 0 });
    // Redelivery: the same events again, mixed with a new one and a repeat within the batch.
    const next = recordOf(tenantId);
    expect(await store.append([batch[3], next, batch[0], next])).toEqual({ stored: 1, duplicates: 3 });
    expect(await seqsOf(tenantId)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 6, archived: 0, archivesRead: 0 });
  });

  it('puts each record in the partition of its month, never in the default one', async () => {
    const tenantId = newId();
    await store.append([
      recordOf(tenantId, { timestamp: '2025-12-31T23:59:59.999Z' }),
      recordOf(tenantId, { timestamp: '2026-01-01T00:00:00.000Z' }),
    ]);
    const partitions = await db.owner.anyFirst(sql.type(z.object({ partition: z.string() }))`
      SELECT tableoid::regclass::text AS partition FROM audit_records WHERE tenant_id = ${tenantId} ORDER BY seq
    `);
    expect(partitions).toEqual(['audit_records_2025_12', 'audit_records_2026_01']);
    expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({ ok: true, records: 2 });
  });

  it('reports OK with the count from the command line (exit 0)', async () => {
    const tenantId = newId();
    await store.append(recordsOf(tenantId, 3));
    const { status, out } = verifyCli(tenantId);
    expect(out).toContain(`audit chain of tenant ${tenantId}: OK, 3 record(s) verified`);
    expect(status).toBe(0);
  });
});

describe('append-only', () => {
  let tenantId: string;

  beforeAll(async () => {
    tenantId = newId();
    await store.append(recordsOf(tenantId, 3));
  });

  const changes = {
    UPDATE: (id: string) => sql.unsafe`UPDATE audit_records SET action = 'forged.action.done' WHERE tenant_id = ${id}`,
    DELETE: (id: string) => sql.unsafe`DELETE FROM audit_records WHERE tenant_id = ${id}`,
  };

  it.each(Object.keys(changes) as Array<keyof typeof changes>)('refuses %s to platform_app (no privilege)', async (op) => {
    const attempt = withTenant(db.app, tenantId, (tx) => tx.query(changes[op](tenantId)));
    await expect(attempt.catch(sqlState)).resolves.toBe('42501');
  });

  it.each(Object.keys(changes) as Array<keyof typeof changes>)('refuses %s to the owner (the trigger)', async (op) => {
    await expect(db.owner.query(changes[op](tenantId))).rejects.toThrow(/append-only/);
  });

  it.each(['audit_records', 'audit_records_2026_05', 'audit_records_default'])('refuses TRUNCATE of %s to the owner', async (table) => {
    await expect(db.owner.query(sql.unsafe`TRUNCATE ${sql.identifier([table])}`)).rejects.toThrow(/append-only/);
  });

  it('refuses INSERT to platform_app: records arrive only through the pipeline', async () => {
    const attempt = withTenant(db.app, tenantId, (tx) => tx.query(sql.unsafe`
      INSERT INTO audit_records (id, tenant_id, seq, action, entity_type, entity_id, occurred_at, prev_hash, hash)
      VALUES (${newId()}, ${tenantId}, 99, 'a.b.c', 'x', 'y', now(), '\\x00', '\\x00')
    `));
    await expect(attempt.catch(sqlState)).resolves.toBe('42501');
  });

  it('gives platform_app no access to a partition by its own name', async () => {
    const attempt = withTenant(db.app, tenantId, (tx) => tx.query(sql.unsafe`SELECT 1 FROM audit_records_2026_05`));
    await expect(attempt.catch(sqlState)).resolves.toBe('42501');
  });

  it('has left every record as it was', async () => {
    expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 3, archived: 0, archivesRead: 0 });
  });
});

describe('tampering with the trigger switched off is detected', () => {
  it('finds a changed field (exit 1 from the command line)', async () => {
    const tenantId = newId();
    const records = recordsOf(tenantId, 5);
    await store.append(records);
    await forge(sql.unsafe`UPDATE audit_records SET after = '{"name":"Mallory"}' WHERE id = ${records[2].id}`);
    expect(await verifyTenantChain(db.app, tenantId)).toEqual({
      ok: false, tenantId, records: 2, broken: { kind: 'hash-mismatch', seq: 3, id: records[2].id },
    });
    const { status, out } = verifyCli(tenantId);
    expect(out).toContain(`BROKEN at seq 3 (record ${records[2].id}): the record was changed after it was stored`);
    expect(status).toBe(1);
  });

  it('finds a record whose hash was recomputed to match its change (its successor no longer follows)', async () => {
    const tenantId = newId();
    const records = recordsOf(tenantId, 4);
    await store.append(records);
    await forge(sql.unsafe`UPDATE audit_records SET hash = decode(repeat('ab', 32), 'hex') WHERE id = ${records[1].id}`);
    // The changed record fails its own hash first; were it recomputed correctly, record 3 would fail.
    expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({ ok: false, broken: { kind: 'hash-mismatch', seq: 2 } });
  });

  it('finds a record removed from the middle', async () => {
    const tenantId = newId();
    const records = recordsOf(tenantId, 4);
    await store.append(records);
    await forge(sql.unsafe`DELETE FROM audit_records WHERE id = ${records[1].id}`);
    expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({
      ok: false, records: 1, broken: { kind: 'seq-gap', expectedSeq: 2, foundSeq: 3 },
    });
  });

  it('finds the last records removed', async () => {
    const tenantId = newId();
    const records = recordsOf(tenantId, 4);
    await store.append(records);
    await forge(sql.unsafe`DELETE FROM audit_records WHERE id = ${records[3].id}`);
    expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({
      ok: false, records: 3, broken: { kind: 'head-mismatch', headSeq: 4, lastSeq: 3 },
    });
  });
});

describe('row-level security', () => {
  const tenantA = newId();
  const tenantB = newId();
  const countOf = (pool: DatabasePool, tenantId: string | null, table: string) => {
    const query = sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([table])}`;
    return tenantId ? withTenant(pool, tenantId, (tx) => tx.oneFirst(query)) : pool.oneFirst(query);
  };

  beforeAll(async () => {
    await store.append(recordsOf(tenantA, 4));
  });

  it.each(['audit_records', 'audit_chain_heads'])("shows tenant B none of A's rows in %s", async (table) => {
    expect(await countOf(db.app, tenantA, table)).toBe(table === 'audit_records' ? 4 : 1);
    expect(await countOf(db.app, tenantB, table)).toBe(0);
    expect(await countOf(db.app, null, table)).toBe(0);
  });

  it("cannot verify (or read) A's chain as tenant B: it sees an empty chain", async () => {
    const asB = await withTenant(db.app, tenantB, (tx) => tx.any(sql.unsafe`SELECT id FROM audit_records WHERE tenant_id = ${tenantA}`));
    expect(asB).toEqual([]);
  });

  it('lets platform_app put records into the fallback buffer but never read them back', async () => {
    const envelope = {
      id: newId(), type: 'audit.record.created', source: 'jest', tenantId: tenantA,
      data: { action: 'a.b.c', entityType: 'x', entityId: 'y' }, schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: null,
    };
    await insertBufferedAuditEvents(db.app, [{ key: 'y', envelope }]);
    await expect(countOf(db.app, tenantA, 'audit_fallback_buffer').catch(sqlState)).resolves.toBe('42501');
    expect(await countOf(db.owner, null, 'audit_fallback_buffer')).toBe(1);
  });
});
