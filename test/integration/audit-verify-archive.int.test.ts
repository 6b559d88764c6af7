import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { createGunzip, gzipSync } from 'node:zlib';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAuditRetentionActivities } from '../../activities/audit/retention.activities';
import { chainHash, type ChainedRecord } from '../../services/audit/chain';
import { newId } from '../../common/ids';
import { repoRoot } from '../../common/paths';
import { sql } from '../../db/pool';
import { verifyTenantChain } from '../../services/audit/verify';
import { createAuditDatabase, quietLogger, type AuditDatabase } from '../helpers/audit';
import { auditRecord, createTestBucket, daysAgo, storeAuditRecords, type TestBucket } from '../helpers/audit-export';

/**
 * `audit:verify` after retention: months moved to the object store and dropped from PostgreSQL are
 * linked into the chain by the hashes the archive recorded (migration 0017), so the chain still
 * verifies from seq 1 to its head; a forged hot row is still found, and so is a hot row forged to
 * look right on its own (the archived record after it no longer follows); with --archives the
 * objects themselves are read and a changed object is found.
 */

jest.setTimeout(60_000);

let db: AuditDatabase;
let bucket: TestBucket;

beforeAll(async () => {
  [db, bucket] = await Promise.all([createAuditDatabase('audit_verify_archive'), createTestBucket('test-audit-verify')]);
});
afterAll(async () => {
  await db?.close();
  await bucket?.remove();
});

/**
 * Six records of a new tenant, four of them in months older than 90 days, and those months
 * archived and dropped. The late one (a replay) lands in the oldest month with a seq after a hot
 * record, so that month's object holds two runs with a hot record between them:
 *   seq 1, 2 (300 days ago) · 3 (200 days) · 4 hot · 5 (300 days, late) · 6 hot
 */
async function tenantWithArchivedMonths(): Promise<{ tenantId: string; stored: ChainedRecord[] }> {
  const tenantId = newId();
  const now = Date.now();
  const stored = await storeAuditRecords(db.owner, [
    auditRecord(tenantId, daysAgo(300, now)),
    auditRecord(tenantId, daysAgo(300, now + 1)),
    auditRecord(tenantId, daysAgo(200, now)),
    auditRecord(tenantId, daysAgo(30, now)),
    auditRecord(tenantId, daysAgo(300, now + 2)),
    auditRecord(tenantId, daysAgo(10, now)),
  ]);
  const retention = createAuditRetentionActivities({ fleetPool: db.owner, objectStore: bucket, logger: quietLogger() });
  for (const partition of await retention.listArchivablePartitions(daysAgo(90, now).toISOString())) {
    await new MockActivityEnvironment().run(retention.archivePartition, partition);
    expect(await retention.dropArchivedPartition(partition)).toMatchObject({ dropped: true });
  }
  return { tenantId, stored };
}

/** Runs statements as the owner with the append-only trigger switched off: what a superuser could do. */
function forge(statement: ReturnType<typeof sql.unsafe>): Promise<void> {
  return db.owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`ALTER TABLE audit_records DISABLE TRIGGER audit_records_append_only`);
    await tx.query(statement);
    await tx.query(sql.unsafe`ALTER TABLE audit_records ENABLE TRIGGER audit_records_append_only`);
  });
}

function verifyCli(tenantId: string, ...flags: string[]) {
  const result = spawnSync(process.execPath, [
    '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'workers/audit-verify.ts'),
    '--tenant', tenantId, '--database-url', db.appUrl, ...flags,
  ], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', S3_BUCKET: bucket.bucket } });
  return { status: result.status, out: result.stdout + result.stderr };
}

const archiveObjects = async (tenantId: string) => (await bucket.keys(`${tenantId}/audit/`)).filter((key) => key.endsWith('.ndjson.gz'));

it('verifies the whole chain after its old months were archived and dropped, and reads the archives with --archives', async () => {
  const { tenantId } = await tenantWithArchivedMonths();
  expect(await db.owner.oneFirst(sql.unsafe`SELECT count(*)::int FROM audit_records WHERE tenant_id = ${tenantId}`)).toBe(2);
  const objects = await archiveObjects(tenantId);
  expect(objects).toHaveLength(2);

  expect(await verifyTenantChain(db.app, tenantId)).toEqual({ ok: true, tenantId, records: 6, archived: 4, archivesRead: 0 });
  expect(await verifyTenantChain(db.app, tenantId, { objectStore: bucket, checkArchives: true, pageSize: 1 }))
    .toEqual({ ok: true, tenantId, records: 6, archived: 4, archivesRead: 2 });

  const plain = verifyCli(tenantId);
  expect(plain.out).toContain('OK, 6 record(s) verified (4 of them archived, linked by the hashes the archive recorded');
  expect(plain.status).toBe(0);
  const read = verifyCli(tenantId, '--archives');
  expect(read.out).toContain('OK, 6 record(s) verified (4 of them archived; 2 archive object(s) read and checked)');
  expect(read.status).toBe(0);
});

it('finds a hot row forged after retention (exit 1)', async () => {
  const { tenantId, stored } = await tenantWithArchivedMonths();
  await forge(sql.unsafe`UPDATE audit_records SET after = '{"name":"Mallory"}' WHERE id = ${stored[5].id}`);

  expect(await verifyTenantChain(db.app, tenantId)).toEqual({
    ok: false, tenantId, records: 5, broken: { kind: 'hash-mismatch', seq: 6, id: stored[5].id },
  });
  const { status, out } = verifyCli(tenantId);
  expect(out).toContain(`BROKEN at seq 6 (record ${stored[5].id}): the record was changed after it was stored`);
  expect(status).toBe(1);
});

it('finds a hot row forged with a recomputed hash: the archived record after it no longer follows', async () => {
  const { tenantId, stored } = await tenantWithArchivedMonths();
  const hot = stored[3];
  const forged = { ...hot, after: { name: 'Mallory' } };
  const hash = chainHash(forged, hot.seq, hot.prevHash);
  await forge(sql.unsafe`
    UPDATE audit_records SET after = '{"name":"Mallory"}', hash = decode(${hash}, 'hex') WHERE id = ${hot.id}
  `);

  expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({
    ok: false, records: 4, broken: { kind: 'archive-link-mismatch', seq: 5 },
  });
});

it('finds a changed archive object with --archives (without it, the catalogue\'s hashes still link)', async () => {
  const { tenantId } = await tenantWithArchivedMonths();
  const [objectKey] = await archiveObjects(tenantId);
  const lines = (await text((await bucket.s3.getObject(bucket.bucket, objectKey)).pipe(createGunzip()))).trimEnd().split('\n');
  const first = JSON.parse(lines[0]) as ChainedRecord;
  lines[0] = JSON.stringify({ ...first, after: { name: 'Mallory' } });
  const body = gzipSync(`${lines.join('\n')}\n`);
  await bucket.s3.putObject(bucket.bucket, objectKey, Readable.from([body]), body.length);

  expect(await verifyTenantChain(db.app, tenantId)).toMatchObject({ ok: true, records: 6 });
  expect(await verifyTenantChain(db.app, tenantId, { objectStore: bucket, checkArchives: true })).toMatchObject({
    ok: false, records: 0,
    broken: { kind: 'archive-object-mismatch', objectKey, reason: expect.stringContaining('the record was changed after it was stored') },
  });
  const { status, out } = verifyCli(tenantId, '--archives');
  expect(out).toContain(`BROKEN in archive object ${objectKey}`);
  expect(status).toBe(1);
});

it('reads the runs from the object itself when the catalogue predates them (migration 0017)', async () => {
  const { tenantId } = await tenantWithArchivedMonths();
  await db.owner.query(sql.unsafe`UPDATE audit_cold_objects SET chain_runs = NULL WHERE tenant_id = ${tenantId}`);

  expect(await verifyTenantChain(db.app, tenantId, { objectStore: bucket }))
    .toEqual({ ok: true, tenantId, records: 6, archived: 4, archivesRead: 2 });
});
