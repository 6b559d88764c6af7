import { ANONYMIZE_ACTION, maskAnonymized } from '../../services/audit/anonymization-mask';
import { newId } from '../../common/ids';
import { selectAnonymizedUsers, upsertAnonymizedUser } from '../../db/queries/audit/audit-anonymization.queries';
import { selectChainPage } from '../../db/queries/audit/audit-records.queries';
import { withTenant } from '../../db/tenant';
import { createAuditDatabase, type AuditDatabase } from '../helpers/audit';
import { auditRecord, readThroughView, storeAuditRecords } from '../helpers/audit-export';

/**
 * The masking the cold export applies to archived records (services/audit/anonymization-mask.ts) is
 * the masking the view audit_records_readable applies to hot rows: the same stored records read
 * both ways must come out identical, for every case of the rule (actor, impersonator, subject,
 * money records, the ANONYMIZE record itself, records after masked_until, microsecond bounds).
 */

jest.setTimeout(60_000);

let db: AuditDatabase;

beforeAll(async () => {
  db = await createAuditDatabase('audit_anonymization_mask');
});
afterAll(async () => {
  await db?.close();
});

it('masks archived records exactly as audit_records_readable masks hot ones', async () => {
  const [tenantId, user, other, operator] = [newId(), newId(), newId(), newId()];
  const at = (ms: number) => new Date(Date.parse('2026-03-10T12:00:00.000Z') + ms);
  await storeAuditRecords(db.owner, [
    auditRecord(tenantId, at(0), { actorId: user }),
    auditRecord(tenantId, at(1), { actorId: other, impersonatorId: user }),
    auditRecord(tenantId, at(2), { actorId: other, entityType: 'user', entityId: user, before: null, meta: { email: 'u@example.com' } }),
    auditRecord(tenantId, at(3), { actorId: other, entityType: 'user', entityId: user, after: null }),
    auditRecord(tenantId, at(4), { action: 'money.wallet.credited', actorId: user, entityType: 'user', entityId: user }),
    auditRecord(tenantId, at(5), { action: ANONYMIZE_ACTION, actorId: operator, entityType: 'user', entityId: user, meta: { recordsAffected: 4 } }),
    auditRecord(tenantId, at(6), { actorId: operator, impersonatorId: null, entityType: 'user', entityId: other }),
    auditRecord(tenantId, at(7), { actorId: user }),
    // masked_until below is 7.5 ms after the first: this one is the user's first unmasked record.
    auditRecord(tenantId, at(8), { actorId: user, entityType: 'user', entityId: user }),
  ]);
  await withTenant(db.owner, tenantId, (tx) => upsertAnonymizedUser(tx, tenantId, user, '2026-03-10T12:00:00.0075Z', newId()));
  await withTenant(db.owner, tenantId, (tx) => upsertAnonymizedUser(tx, tenantId, operator, '2026-01-01T00:00:00Z', newId()));

  const raw = await selectChainPage(db.owner, tenantId, 0, Number.MAX_SAFE_INTEGER, 100);
  const anonymized = await withTenant(db.app, tenantId, (tx) => selectAnonymizedUsers(tx, tenantId));
  const masked = raw.map((record) => maskAnonymized(record, anonymized));

  expect(masked).toEqual(await readThroughView(db.app, tenantId));
  // And the cases really differ from the raw records where the rule says so.
  expect(masked.map((record) => record.actorId === 'anonymized')).toEqual([true, false, false, false, false, false, false, true, false]);
  expect(masked[1]).toMatchObject({ impersonatorId: 'anonymized', actorIp: null, actorUserAgent: null, actorId: other });
  expect(masked[2]).toMatchObject({ before: null, after: { anonymized: true }, meta: { anonymized: true } });
  expect(masked[4]).toEqual(raw[4]);
  expect(masked[5]).toEqual(raw[5]);
  expect(masked[8]).toEqual(raw[8]);
});
