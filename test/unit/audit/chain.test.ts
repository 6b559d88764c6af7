import { addToRuns, chainHash, chainText, checkLink, extendChain, GENESIS_HASH } from '../../../services/audit/chain';
import type { ChainRun } from '../../../db/queries/audit/audit-retention.queries';
import { auditRecordFromEnvelope, checkAuditPayload, type AuditRecord } from '../../../services/audit/record';

/** The chain rules of the audit store (its canonical serialization: test/unit/infra/canonical-json.test.ts). */

const record = (overrides: Partial<AuditRecord> = {}): AuditRecord => ({
  id: '01900000-0000-7000-8000-000000000001',
  tenantId: '01900000-0000-7000-8000-0000000000aa',
  action: 'money.wallet.credited',
  entityType: 'wallet',
  entityId: '01J0000000000000000000000A',
  actorId: '01900000-0000-7000-8000-0000000000bb',
  actorIp: '203.0.113.7',
  actorUserAgent: 'curl/8',
  impersonatorId: null,
  before: { balance: 100 },
  after: { balance: 250 },
  meta: { amount: 150, currency: 'USD' },
  traceId: '0af7651916cd43dd8448eb211c80319c',
  timestamp: '2026-05-17T10:00:00.123Z',
  ...overrides,
});

describe('chainHash', () => {
  it('is the SHA-256 of the canonical text, in hex', () => {
    const text = chainText(record(), 1, GENESIS_HASH);
    expect(text.startsWith('{"action":"money.wallet.credited","actorId":')).toBe(true);
    expect(chainHash(record(), 1, GENESIS_HASH)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is stable for an equal record and changes with every hashed field', () => {
    const base = chainHash(record(), 1, GENESIS_HASH);
    expect(chainHash(record(), 1, GENESIS_HASH)).toBe(base);
    const changes: Partial<AuditRecord>[] = [
      { id: '01900000-0000-7000-8000-000000000002' }, { tenantId: '01900000-0000-7000-8000-0000000000ab' },
      { action: 'money.wallet.debited' }, { entityType: 'user' }, { entityId: 'x' }, { actorId: null }, { actorIp: '203.0.113.8' },
      { actorUserAgent: 'curl/9' }, { impersonatorId: 'someone' }, { before: null }, { after: { balance: 251 } },
      { meta: { amount: 150, currency: 'EUR' } }, { traceId: null }, { timestamp: '2026-05-17T10:00:00.124Z' },
    ];
    for (const change of changes) expect(chainHash(record(change), 1, GENESIS_HASH)).not.toBe(base);
    expect(chainHash(record(), 2, GENESIS_HASH)).not.toBe(base);
    expect(chainHash(record(), 1, 'f'.repeat(64))).not.toBe(base);
  });

  it('does not depend on the key order of the snapshots', () => {
    expect(chainHash(record({ meta: { currency: 'USD', amount: 150 } }), 1, GENESIS_HASH))
      .toBe(chainHash(record(), 1, GENESIS_HASH));
  });
});

describe('the chain', () => {
  const three = [record(), record({ id: '01900000-0000-7000-8000-000000000002' }), record({ id: '01900000-0000-7000-8000-000000000003' })];

  it('numbers records from the head and links each to its predecessor', () => {
    const chained = extendChain({ seq: 0, hash: GENESIS_HASH }, three);
    expect(chained.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(chained[0].prevHash).toBe(GENESIS_HASH);
    expect(chained[1].prevHash).toBe(chained[0].hash);
    expect(chained[2].prevHash).toBe(chained[1].hash);
    const continued = extendChain({ seq: 3, hash: chained[2].hash }, [record({ id: '01900000-0000-7000-8000-000000000004' })]);
    expect(continued[0]).toMatchObject({ seq: 4, prevHash: chained[2].hash });
  });

  it('finds a changed field, a missing record and a replaced record', () => {
    const [first, second, third] = extendChain({ seq: 0, hash: GENESIS_HASH }, three) as [never, never, never];
    const genesis = { seq: 0, hash: GENESIS_HASH };
    expect(checkLink(genesis, first)).toBeNull();
    expect(checkLink(first, second)).toBeNull();
    expect(checkLink(first, { ...(second as object), meta: { amount: 1 } } as never)).toMatchObject({ kind: 'hash-mismatch', seq: 2 });
    expect(checkLink(first, third)).toMatchObject({ kind: 'seq-gap', expectedSeq: 2, foundSeq: 3 });
    const [forged] = extendChain({ seq: 1, hash: 'e'.repeat(64) }, [record({ action: 'forged.action.done' })]);
    expect(checkLink(first, forged)).toMatchObject({ kind: 'prev-hash-mismatch', seq: 2 });
  });
});

describe('audit record payload', () => {
  const valid = { action: 'files.file.permanent_deleted', entityType: 'file', entityId: 'f1' };

  it('fills absent optional fields with null', () => {
    const checked = checkAuditPayload(valid);
    expect(checked).toEqual({
      ok: true,
      payload: {
        ...valid, actorId: null, actorIp: null, actorUserAgent: null, impersonatorId: null, before: null, after: null, meta: null,
      },
    });
  });

  it.each<[string, unknown, string]>([
    ['a missing action', { entityType: 'file', entityId: 'f1' }, 'action'],
    ['an unknown field', { ...valid, tenantId: 'x' }, 'record'],
    ['a snapshot that is not an object', { ...valid, after: [1] }, 'after'],
    ['U+0000 in a string', { ...valid, meta: { note: 'a\u0000b' } }, 'record'],
    ['a lone surrogate', { ...valid, entityId: 'x\ud800' }, 'record'],
  ])('refuses %s', (_name, input, field) => {
    const checked = checkAuditPayload(input);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.errors.map((error) => error.field)).toContain(field);
  });

  it('keeps a backslash-u that is text, and paired surrogates', () => {
    expect(checkAuditPayload({ ...valid, meta: { note: '\\u0000 and 😀' } }).ok).toBe(true);
  });

  it('takes id, tenant, trace and timestamp (to milliseconds, UTC) from the envelope', () => {
    const result = auditRecordFromEnvelope({
      id: '01900000-0000-7000-8000-000000000009', type: 'audit.record.created', source: 'files',
      tenantId: '01900000-0000-7000-8000-0000000000aa', data: valid, schemaVersion: '1.0.0',
      timestamp: '2026-05-17T12:00:00.123456+02:00', traceId: null,
    });
    expect(result).toMatchObject({ ok: true, record: { id: '01900000-0000-7000-8000-000000000009', timestamp: '2026-05-17T10:00:00.123Z' } });
  });

  it('names an event of another type instead of storing it', () => {
    const result = auditRecordFromEnvelope({
      id: '01900000-0000-7000-8000-000000000009', type: 'audit.export.requested', source: 'x',
      tenantId: '01900000-0000-7000-8000-0000000000aa', data: valid, schemaVersion: '1.0.0', timestamp: '2026-05-17T10:00:00Z', traceId: null,
    });
    expect(result).toEqual({ ok: false, reason: 'event type audit.export.requested is not audit.record.created' });
  });
});

describe('addToRuns', () => {
  it('groups consecutive seqs into runs that keep the prevHash of their first link and the hash of their last', () => {
    const runs: ChainRun[] = [];
    for (const seq of [1, 2, 3, 7, 9, 10]) addToRuns(runs, { seq, prevHash: `p${seq}`, hash: `h${seq}` });
    expect(runs).toEqual([
      { firstSeq: 1, lastSeq: 3, prevHash: 'p1', lastHash: 'h3' },
      { firstSeq: 7, lastSeq: 7, prevHash: 'p7', lastHash: 'h7' },
      { firstSeq: 9, lastSeq: 10, prevHash: 'p9', lastHash: 'h10' },
    ]);
  });
});
