import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { z } from 'zod';
import { sql } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { startAuditApiStack, untilStored, type AuditApiStack } from '../../helpers/audit-api';
import { someLoopback, waitFor } from '../../helpers/http';
import { bearer, post, registerAccount, type RegisteredAccount } from '../../helpers/identity';

/**
 * The client address behind a load balancer (api/http/client-ip.ts, docs/decisions/gateway.md):
 * with TRUSTED_PROXIES covering 127.0.0.1 (the tests' own address) the X-Forwarded-For entry it
 * appended names the client in audit records and rate-limit buckets; without it, or from a peer it
 * does not cover, the header is ignored and a client cannot choose its address.
 */

jest.setTimeout(60_000);

const LOW = { RATE_LIMIT_PER_MINUTE: '3' };

/** The audit pipeline behind a gateway that trusts 127.0.0.1, with the request audit on. */
let stack: AuditApiStack;
/** A gateway that trusts no proxy, sending its audit records to the same topic. */
let direct: TestGateway;
let trustingLimited: TestGateway;
let directLimited: TestGateway;
let account: RegisteredAccount;

beforeAll(async () => {
  stack = await startAuditApiStack('client_ip', { TRUSTED_PROXIES: '127.0.0.1', AUDIT_REQUEST_ENABLED: 'true', GRPC_CALL_TIMEOUT_MS: '20000' });
  [direct, trustingLimited, directLimited] = await Promise.all([
    startTestGateway({ env: { AUDIT_INTAKE_TOPIC: stack.topic.name, AUDIT_REQUEST_ENABLED: 'true', GRPC_CALL_TIMEOUT_MS: '20000' } }),
    startTestGateway({ env: { ...LOW, TRUSTED_PROXIES: '127.0.0.1' } }),
    startTestGateway({ env: LOW }),
  ]);
  account = await registerAccount(stack.gateway);
});

afterAll(async () => {
  await Promise.all([direct?.close(), trustingLimited?.close(), directLimited?.close()]);
  await stack?.close();
});

/** An address of the IPv6 documentation range no other run shares a rate-limit bucket with. */
const someClient = () => `2001:db8::${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;

const recordOf = z.object({ action: z.string(), entityId: z.string(), actorIp: z.string().nullable() });

/** The actorIp of the record written through POST /audit/records, and of that request's own audit.api.called record. */
async function actorIpsOf(auditId: string, marker: string): Promise<{ written: string | null; requestAudit: string | null }> {
  await untilStored(stack.owner, [auditId]);
  const requestRecords = () => stack.owner.any(sql.type(recordOf)`
    SELECT action, entity_id AS "entityId", actor_ip AS "actorIp" FROM audit_records
    WHERE tenant_id = ${account.tenant.id} AND action = 'audit.api.called' AND actor_user_agent = ${marker}
  `);
  await waitFor('the request audit record', async () => (await requestRecords()).length === 1);
  const written = await stack.owner.oneFirst(sql.type(z.object({ actorIp: z.string().nullable() }))`
    SELECT actor_ip AS "actorIp" FROM audit_records WHERE id = ${auditId}
  `);
  return { written, requestAudit: (await requestRecords())[0].actorIp };
}

async function writeRecord(gateway: TestGateway, forwardedFor: string): Promise<{ written: string | null; requestAudit: string | null }> {
  // A user agent of its own finds this request's audit.api.called record among the tenant's.
  const marker = `client-ip-test/${randomBytes(6).toString('hex')}`;
  const response = await post(gateway, '/audit/records', { action: 'crm.contact.updated', entityType: 'contact', entityId: 'c-1' }, {
    ...bearer(account.accessToken), 'x-forwarded-for': forwardedFor, 'user-agent': marker,
  });
  expect(response.status).toBe(202);
  return actorIpsOf(String(response.body.auditId), marker);
}

describe('audit records', () => {
  it('take the client a trusted proxy names as actorIp, not the entries left of it', async () => {
    expect(await writeRecord(stack.gateway, '198.51.100.66, 203.0.113.7')).toEqual({ written: '203.0.113.7', requestAudit: '203.0.113.7' });
  });

  it('keep the socket\'s peer when no proxy is trusted: the header is ignored', async () => {
    expect(await writeRecord(direct, '203.0.113.7')).toEqual({ written: '127.0.0.1', requestAudit: '127.0.0.1' });
  });
});

/** POST /auth/refresh (public, rate-limited by ip) from a chosen loopback address with a chosen X-Forwarded-For. */
function refreshFrom(gateway: TestGateway, localAddress: string, forwardedFor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor };
    const req = request(`${gateway.baseUrl}/v1/auth/refresh`, { method: 'POST', localAddress, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ refreshToken: 'not-a-token' }));
  });
}

describe('rate limits by ip', () => {
  it('give each client a trusted proxy names a bucket of its own', async () => {
    const client = someClient();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push(await refreshFrom(trustingLimited, '127.0.0.1', `198.51.100.${i + 1}, ${client}`));
    expect(statuses).toEqual([401, 401, 401, 429]);
    // Another client behind the same proxy still has its whole allowance.
    expect(await refreshFrom(trustingLimited, '127.0.0.1', someClient())).toBe(401);
  });

  it.each([
    ['no proxy is trusted', () => directLimited],
    ['the peer is not a trusted proxy', () => trustingLimited],
  ])('charge the socket\'s peer when %s, whatever X-Forwarded-For says', async (_case, gateway) => {
    const peer = someLoopback();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push(await refreshFrom(gateway(), peer, someClient()));
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});
