import { z } from 'zod';
import { sql } from '../../../db/pool';
import { call, waitFor } from '../../helpers/http';
import { bearer, get, registerAccount } from '../../helpers/identity';
import { startAuditApiStack, type AuditApiStack } from '../../helpers/audit-api';

/**
 * Every authenticated request leaves an `audit.api.called` record (docs/reference/gateway.md#rule-17), written
 * after the response through the audit intake, Kafka and the consumer into the chained store.
 */

jest.setTimeout(60_000);

let stack: AuditApiStack;

beforeAll(async () => {
  // The registration starts two workflows on the Temporal server the workflow suites load beside
  // this file; once, on a busy run, a start outlasted the 5 s deadline (504). This file is about the
  // audit records, and the deadline's own answers are tested where they are the subject.
  stack = await startAuditApiStack('audit_request', { AUDIT_REQUEST_ENABLED: 'true', GRPC_CALL_TIMEOUT_MS: '20000' });
});

afterAll(async () => {
  await stack?.close();
});

const apiCall = z.object({ entityId: z.string(), actorId: z.string().nullable(), traceId: z.string().nullable(), meta: z.record(z.string(), z.unknown()) });

describe('request audit', () => {
  it('records method, route, status, latency, actor, tenant and trace id of authenticated requests, errors included', async () => {
    const account = await registerAccount(stack.gateway);
    const traceId = 'cd'.repeat(16);
    const me = await get(stack.gateway, '/auth/me', account.accessToken);
    expect(me.status).toBe(200);
    const missing = await call(`${stack.gateway.baseUrl}/v1/users/00000000-0000-7000-8000-000000000000`, {
      headers: { ...bearer(account.accessToken), traceparent: `00-${traceId}-${'e'.repeat(16)}-01` },
    });
    expect(missing.status).toBe(404);

    const recordsOf = () => stack.owner.any(sql.type(apiCall)`
      SELECT entity_id AS "entityId", actor_id AS "actorId", trace_id AS "traceId", meta
      FROM audit_records WHERE tenant_id = ${account.tenant.id} AND action = 'audit.api.called' ORDER BY seq
    `);
    await waitFor('the request audit records', async () => (await recordsOf()).length >= 2);
    const records = await recordsOf();
    expect(records).toEqual(expect.arrayContaining([
      expect.objectContaining({
        entityId: 'GET /v1/auth/me', actorId: account.user.id,
        meta: expect.objectContaining({ method: 'GET', route: '/v1/auth/me', status: 200, latencyMs: expect.any(Number) }),
      }),
      expect.objectContaining({
        entityId: 'GET /v1/users/:id', actorId: account.user.id, traceId,
        meta: expect.objectContaining({ status: 404, path: '/v1/users/00000000-0000-7000-8000-000000000000' }),
      }),
    ]));
  });
});
