import type { DatabasePool } from '../../../db/pool';
import type { TestGateway } from '../app';
import { seedDeadLetter } from '../dead-letters';
import { samplePng } from '../files-scan';
import { formOf } from '../files';
import { waitFor } from '../http';
import { registerAccount, uniqueEmail } from '../identity';
import { verifyEmail } from '../money';
import { ID_KINDS, type IdKind } from './operations';

/**
 * A fresh tenant holding one real resource of every kind of operations.ts (its owner's, made through
 * the real gateway as a client makes them; the dead letter as a consumer group writes it), for the
 * cross-tenant run: tenant A's ids are what tenant B tries, tenant B's fill the other id slots of a
 * call. The money, scan and mail work runs on the platform's own workers (`npm run up`), as in
 * test/api/tour.int.test.ts.
 */
export interface SeededTenant {
  tenantId: string;
  userId: string;
  email: string;
  token: string;
  ids: Record<IdKind, string>;
  /** Everything of this tenant another tenant must never see: tokens, the API key, the webhook secret. */
  secrets: string[];
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function request(gateway: TestGateway, method: string, path: string, token: string, json?: unknown, headers: Record<string, string> = {}, body?: FormData): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: json === undefined ? body : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: /json/.test(response.headers.get('content-type') ?? '') && text ? JSON.parse(text) as Record<string, unknown> : {} };
}

/** The call's answer when it has `status`; anything else fails the seeding, with the answer. */
async function expected(what: string, status: number, answer: Promise<Answer>): Promise<Answer> {
  const got = await answer;
  if (got.status !== status) throw new Error(`seeding ${what}: expected ${status}, got ${got.status} ${JSON.stringify(got.body)}`);
  return got;
}

const idempotent = () => ({ 'idempotency-key': crypto.randomUUID() });

export async function seedTenant(gateway: TestGateway, owner: DatabasePool): Promise<SeededTenant> {
  const account = await registerAccount(gateway);
  const { accessToken: token } = account;
  const tenantId = account.tenant.id;
  const userId = account.user.id;
  await verifyEmail(owner, userId);
  const send = (method: string, path: string, json?: unknown, headers?: Record<string, string>) => request(gateway, method, path, token, json, headers);

  const [records, files, money, identity, integrations, audit] = await Promise.all([
    (async () => {
      await expected('crm install', 201, send('POST', '/modules/crm/install'));
      const company = await expected('a company', 201, send('POST', '/data/crm/companies', { name: 'Acme' }));
      const contact = await expected('a contact', 201, send('POST', '/data/crm/contacts', { firstName: 'Ada', companyId: company.body.id }));
      return { company: String(company.body.id), contact: String(contact.body.id) };
    })(),
    (async () => {
      const png = await samplePng(8, 8);
      const form = formOf([['bucket', 'assets'], ['originalName', 'pixel.png'], ['file', { bytes: png, filename: 'pixel.png', type: 'image/png' }]]);
      const uploaded = await expected('an upload', 201, request(gateway, 'POST', '/files/upload', token, undefined, {}, form));
      const file = String(uploaded.body.id);
      // The platform's worker scans it; processing needs it available.
      await waitFor(`file ${file} available`, async () => (await send('GET', `/files/${file}?meta=1`)).body.status === 'available', 60_000, 300);
      const job = await expected('a process job', 202, send('POST', `/files/${file}/process`, { operations: [{ resize: { width: 4 } }] }));
      const tus = await expected('a tus upload', 201, send('POST', '/files/tus', undefined, {
        'tus-resumable': '1.0.0', 'upload-length': '100',
        'upload-metadata': `bucket ${Buffer.from('documents').toString('base64')},originalName ${Buffer.from('part.bin').toString('base64')}`,
      }));
      return { file, fileJob: String(job.body.jobId), tusUpload: String(tus.headers.get('location')).split('/').pop()! };
    })(),
    (async () => {
      const wallets = [];
      for (const label of ['main', 'savings']) {
        wallets.push(String((await expected('a wallet', 201, send('POST', '/wallets', { userId, currency: 'USD', label }))).body.id));
      }
      const credit = await expected('a credit', 200, send('POST', `/wallets/${wallets[0]}/credit`, { amount: 10_000, currency: 'USD', reason: 'seed' }, idempotent()));
      // A TTL far beyond the run: the hold stays held, and its expiry changes nothing while B tries it.
      const hold = await expected('a hold', 200, send('POST', `/wallets/${wallets[0]}/hold`, { amount: 100, currency: 'USD', ttl: '24h', reason: 'seed' }, idempotent()));
      const transfer = await expected('a transfer', 200, send('POST', '/transfers', { fromWalletId: wallets[0], toWalletId: wallets[1], amount: 50, currency: 'USD', reason: 'seed' }, idempotent()));
      return {
        wallet: wallets[0], transaction: String(credit.body.transactionId ?? credit.body.id),
        hold: String(hold.body.transactionId ?? hold.body.id), transfer: String(transfer.body.transactionId ?? transfer.body.id),
      };
    })(),
    (async () => {
      const member = await expected('a user', 201, send('POST', '/users', { email: uniqueEmail('member'), firstName: 'Grace', lastName: 'Hopper' }));
      const role = await expected('a role', 201, send('POST', '/roles', { name: 'auditor', permission_ids: ['users.list'] }));
      const sessions = await expected('the sessions', 200, send('GET', '/auth/sessions'));
      const subscription = await expected('the subscription', 200, send('GET', '/billing/subscriptions'));
      return {
        user: String(member.body.id), role: String(role.body.id),
        session: String((sessions.body.data as { id: string }[])[0].id), subscription: String(subscription.body.id),
      };
    })(),
    (async () => {
      const key = await expected('an API key', 201, send('POST', '/api-keys', { name: 'cross-tenant', permissions: ['users.list'] }));
      // Nothing listens on port 9 and no event of this type is published: the endpoint is never delivered to.
      const endpoint = await expected('a webhook endpoint', 201, send('POST', '/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', eventTypes: ['crosstenant.never.*'] }));
      const deadLetter = await seedDeadLetter(owner, tenantId);
      return {
        apiKey: String(key.body.id), webhookEndpoint: String(endpoint.body.id), deadLetter: deadLetter.id,
        secrets: [String(key.body.key), String(endpoint.body.secret)],
      };
    })(),
    (async () => {
      const record = await expected('an audit record', 202, send('POST', '/audit/records', { action: 'crosstenant.seeded', entityType: 'tenant', entityId: tenantId }));
      const auditRecord = String(record.body.auditId);
      // Stored by the platform's audit consumer: until then a lookup is 404 for its owner as well.
      await waitFor(`audit record ${auditRecord} stored`, async () => (await send('GET', `/audit/records/${auditRecord}`)).status === 200, 60_000, 300);
      // A range before the hot window: a cold export job.
      const exported = await expected('a cold export', 202, send('GET', '/audit/export?since=2020-01-01T00:00:00Z&until=2020-01-02T00:00:00Z'));
      return { auditRecord, exportJob: String(exported.body.jobId) };
    })(),
  ]);
  const { secrets: keySecrets, ...integrationIds } = integrations;
  const ids: Record<IdKind, string> = { tenant: tenantId, ...records, ...files, ...money, ...identity, ...integrationIds, ...audit };
  const missing = ID_KINDS.filter((kind) => !ids[kind] || ids[kind] === 'undefined');
  if (missing.length > 0) throw new Error(`seeding left kinds without an id: ${missing.join(', ')}`);
  return {
    tenantId, userId, email: account.user.email, token, ids,
    secrets: [account.accessToken, account.refreshToken, ...account.recoveryCodes, ...keySecrets],
  };
}
