import { z } from 'zod';
import { sql } from '../../../db/pool';
import { bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { startAuditApiStack, untilStored, type AuditApiStack } from '../../helpers/audit-api';

/**
 * POST /audit/records and POST /audit (docs/reference/audit.md, rules 3 to 6): 202 at once, records land in the chained store
 * through Kafka and the audit consumer, the injected fields come from the request only, and a
 * batch holds at most 500 records.
 */

jest.setTimeout(60_000);

let stack: AuditApiStack;
let account: RegisteredAccount;

beforeAll(async () => {
  stack = await startAuditApiStack('audit_intake');
  account = await registerAccount(stack.gateway);
});

afterAll(async () => {
  await stack?.close();
});

const storedRow = z.object({
  tenantId: z.string(), action: z.string(), entityType: z.string(), entityId: z.string(),
  actorId: z.string().nullable(), actorIp: z.string().nullable(), actorUserAgent: z.string().nullable(),
  traceId: z.string().nullable(), timestamp: z.string(), after: z.unknown(), meta: z.unknown(),
});

const stored = (id: string) => stack.owner.one(sql.type(storedRow)`
  SELECT tenant_id AS "tenantId", action, entity_type AS "entityType", entity_id AS "entityId", actor_id AS "actorId",
         actor_ip AS "actorIp", actor_user_agent AS "actorUserAgent", trace_id AS "traceId", occurred_at AS "timestamp", after, meta
  FROM audit_records WHERE id = ${id}
`);

const record = (n: number) => ({ action: 'crm.contact.updated', entityType: 'contact', entityId: `c-${n}`, after: { n } });

describe.each([['/audit/records'], ['/audit']])('POST %s', (path) => {
  it('answers 202 {auditId, status: queued, createdAt} and the record reaches the store with the injected fields', async () => {
    const traceId = 'aa'.repeat(16);
    const response = await post(stack.gateway, path, { ...record(1), meta: { via: path } }, {
      ...bearer(account.accessToken), 'user-agent': 'intake-test/1.0', traceparent: `00-${traceId}-${'b'.repeat(16)}-01`,
    });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ auditId: expect.any(String), status: 'queued', createdAt: expect.any(String) });
    const auditId = String(response.body.auditId);
    await untilStored(stack.owner, [auditId]);
    expect(await stored(auditId)).toEqual({
      tenantId: account.tenant.id, action: 'crm.contact.updated', entityType: 'contact', entityId: 'c-1',
      actorId: account.user.id, actorIp: '127.0.0.1', actorUserAgent: 'intake-test/1.0', traceId,
      timestamp: response.body.createdAt, after: { n: 1 }, meta: { via: path },
    });
  });

  it('ignores the injected fields when a client sends them', async () => {
    const forged = {
      ...record(2), actorId: '00000000-0000-4000-8000-000000000001', actorIp: '203.0.113.9', actorUserAgent: 'forged',
      tenantId: '00000000-0000-4000-8000-000000000002', timestamp: '2001-01-01T00:00:00.000Z', traceId: 'forged', impersonatorId: 'x',
    };
    const response = await post(stack.gateway, path, forged, { ...bearer(account.accessToken), 'user-agent': 'real-agent' });
    expect(response.status).toBe(202);
    const auditId = String(response.body.auditId);
    await untilStored(stack.owner, [auditId]);
    const row = await stored(auditId);
    expect(row).toMatchObject({
      tenantId: account.tenant.id, actorId: account.user.id, actorIp: '127.0.0.1', actorUserAgent: 'real-agent',
      timestamp: response.body.createdAt,
    });
    expect(row.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('takes a batch {records} and refuses 501 records with 400 batch-limit-exceeded', async () => {
    const batch = await post(stack.gateway, path, { records: [record(3), record(4)] }, bearer(account.accessToken));
    expect(batch.status).toBe(202);
    const ids = (batch.body.data as Array<{ auditId: string }>).map((a) => a.auditId);
    expect(ids).toHaveLength(2);
    await untilStored(stack.owner, ids);

    const tooMany = await post(stack.gateway, path, { records: Array.from({ length: 501 }, (_, n) => record(n)) }, bearer(account.accessToken));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.type).toBe(stack.gateway.problemType('batch-limit-exceeded'));
  });
});

describe.each([['/audit/records/batch'], ['/audit/batch']])('POST %s', (path) => {
  it('accepts 500 records at once and refuses 501', async () => {
    const full = await post(stack.gateway, path, { records: Array.from({ length: 500 }, (_, n) => record(n)) }, bearer(account.accessToken));
    expect(full.status).toBe(202);
    expect(full.body).toMatchObject({ status: 'queued', createdAt: expect.any(String) });
    const ids = (full.body.data as Array<{ auditId: string }>).map((a) => a.auditId);
    expect(new Set(ids).size).toBe(500);
    await untilStored(stack.owner, ids);

    const tooMany = await post(stack.gateway, path, { records: Array.from({ length: 501 }, (_, n) => record(n)) }, bearer(account.accessToken));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.type).toBe(stack.gateway.problemType('batch-limit-exceeded'));
  });
});

describe('refusals', () => {
  it('needs a bearer token', async () => {
    const response = await post(stack.gateway, '/audit/records', record(1));
    expect(response.status).toBe(401);
  });

  it('refuses a record without its required fields, an unknown field, or a wildcard action', async () => {
    const missing = await post(stack.gateway, '/audit/records', { action: 'x.y.z' }, bearer(account.accessToken));
    expect(missing.status).toBe(400);
    expect(missing.body.type).toBe(stack.gateway.problemType('validation-error'));
    expect((missing.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['entityId', 'entityType']);
    const unknown = await post(stack.gateway, '/audit', { ...record(1), severity: 'high' }, bearer(account.accessToken));
    expect(unknown.status).toBe(400);
    const wildcard = await post(stack.gateway, '/audit', { ...record(1), action: 'crm.*' }, bearer(account.accessToken));
    expect(wildcard.status).toBe(400);
  });
});
