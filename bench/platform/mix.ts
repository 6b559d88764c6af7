import { newId } from '../../common/ids';
import type { DatabasePool } from '../../db/pool';
import { setUpTenants } from '../faults/load';
import { BENCH_LIST_QUERY } from '../lib/data-list';
import { httpCaller } from '../lib/load';
import { BENCH_PASSWORD, type BenchAccount } from '../lib/money';

/**
 * The load of `npm run bench:platform`: what an application's users do over many tenants, mostly
 * reads, as route families (money, data, files, events, audit, identity, billing) the report gives
 * figures for. Each tenant is an owner on the enterprise plan with crm installed, two funded
 * wallets and one for holds, contacts of a few companies, and files already scanned.
 */

export type Call = ReturnType<typeof httpCaller>;

/** A tenant of the run, with ids its reads and writes use. */
export interface BenchTenant {
  account: BenchAccount;
  /** When its access token was issued: tokens live 15 minutes, so a soak signs in again before that. */
  tokenAt: number;
  wallets: [string, string];
  holdWallet: string;
  /** Holds of the run not yet confirmed, newest last, with when they were taken. */
  held: { id: string; at: number }[];
  companies: string[];
  contacts: string[];
  files: string[];
}

export interface Answer { status: number; text: string }

/** One kind of request: its family in the report, its share of the mix, and how it is sent. */
export interface Operation {
  name: string;
  family: string;
  weight: number;
  send(call: Call, tenant: BenchTenant, random: () => number): Promise<Answer>;
}

/** A hold is confirmed only within this time of its five-minute TTL: a later confirmation could meet it expired (a refusal, not a failure). */
const HOLD_CONFIRMABLE_MS = 3 * 60_000;
const LAST_NAMES = ['Smith', 'Jones', 'Garcia', 'Miller', 'Brown', 'Davis', 'Wilson', 'Moore'];
const json = (token: string, key?: string) => ({
  authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}),
});
const get = (call: Call, tenant: BenchTenant, path: string) => call('GET', `/v1${path}`, { authorization: `Bearer ${tenant.account.token}` });
const post = (call: Call, tenant: BenchTenant, path: string, body: unknown, key?: string) =>
  call('POST', `/v1${path}`, json(tenant.account.token, key), JSON.stringify(body));
const any = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)];

/** A contact as crm's model takes it, its fields spread so the list's filters keep part of them. */
function contact(tenant: BenchTenant, random: () => number) {
  return {
    firstName: 'Ada', lastName: any(LAST_NAMES, random), email: `c.${newId()}@example.com`, age: 18 + Math.floor(random() * 60), companyId: any(tenant.companies, random),
  };
}

/** A multipart upload of a small text file, as a browser's form sends it. */
async function uploadForm(): Promise<{ type: string; bytes: Buffer }> {
  const form = new FormData();
  form.append('bucket', 'documents');
  form.append('originalName', 'note.txt');
  form.append('file', new Blob([`bench platform ${newId()}\n`], { type: 'text/plain' }), 'note.txt');
  const encoded = new Response(form);
  return { type: encoded.headers.get('content-type')!, bytes: Buffer.from(await encoded.arrayBuffer()) };
}

async function upload(call: Call, tenant: BenchTenant): Promise<Answer> {
  const { type, bytes } = await uploadForm();
  return call('POST', '/v1/files/upload', { authorization: `Bearer ${tenant.account.token}`, 'content-type': type, 'content-length': bytes.length }, bytes);
}

/** Signs the tenant's owner in again; the new access token replaces the old. */
export async function login(call: Call, tenant: BenchTenant): Promise<Answer> {
  const answer = await call('POST', '/v1/auth/login', { 'content-type': 'application/json' }, JSON.stringify({ email: tenant.account.email, password: BENCH_PASSWORD }));
  if (answer.status === 200) {
    tenant.account.token = (JSON.parse(answer.text) as { accessToken: string }).accessToken;
    tenant.tokenAt = Date.now();
  }
  return answer;
}

/** The id a 201 answer names, kept (a bounded number of them) for the reads and writes that follow. */
function keep(ids: string[], answer: Answer): Answer {
  if (answer.status === 201) {
    ids.push((JSON.parse(answer.text) as { id: string }).id);
    if (ids.length > 200) ids.shift();
  }
  return answer;
}

export const MIX: readonly Operation[] = [
  { name: 'GET /wallets/:id/balance', family: 'money: read', weight: 9, send: (call, t, r) => get(call, t, `/wallets/${any(t.wallets, r)}/balance`) },
  { name: 'GET /wallets/:id/transactions', family: 'money: read', weight: 4, send: (call, t, r) => get(call, t, `/wallets/${any(t.wallets, r)}/transactions?page_size=20`) },
  { name: 'POST /wallets/:id/credit', family: 'money: write', weight: 1, send: (call, t, r) => post(call, t, `/wallets/${any(t.wallets, r)}/credit`, { amount: 5 }, newId()) },
  {
    name: 'POST /transfers', family: 'money: write', weight: 4,
    send: (call, t, r) => {
      const [from, to] = r() < 0.5 ? t.wallets : [t.wallets[1], t.wallets[0]];
      return post(call, t, '/transfers', { fromWalletId: from, toWalletId: to, amount: 1, currency: 'USD', reason: 'bench' }, newId());
    },
  },
  {
    // Held for five minutes: most expire by their own timer, a third are confirmed before.
    name: 'POST /wallets/:id/hold', family: 'money: write', weight: 1.5,
    send: async (call, t) => {
      const answer = await post(call, t, `/wallets/${t.holdWallet}/hold`, { amount: 1, currency: 'USD', ttl: '5m', reason: 'bench' }, newId());
      if (answer.status === 200) t.held.push({ id: (JSON.parse(answer.text) as { id: string }).id, at: Date.now() });
      return answer;
    },
  },
  {
    // The newest hold, while it is surely still held; a tenant with none reads the balance instead.
    name: 'POST /holds/:id/confirm', family: 'money: write', weight: 0.5,
    send: (call, t) => {
      const hold = t.held.pop();
      t.held = t.held.filter(({ at }) => Date.now() - at < HOLD_CONFIRMABLE_MS);
      return hold && Date.now() - hold.at < HOLD_CONFIRMABLE_MS
        ? post(call, t, `/holds/${hold.id}/confirm`, {}, newId()) : get(call, t, `/wallets/${t.holdWallet}/balance`);
    },
  },
  { name: 'GET /data/crm/contacts/:id', family: 'data: read', weight: 18, send: (call, t, r) => get(call, t, `/data/crm/contacts/${any(t.contacts, r)}`) },
  { name: 'GET /data/crm/contacts?… (3 filters, order, embed)', family: 'data: read', weight: 10, send: (call, t) => get(call, t, `/data/crm/contacts?${BENCH_LIST_QUERY}`) },
  { name: 'POST /data/crm/contacts', family: 'data: write', weight: 4, send: async (call, t, r) => keep(t.contacts, await post(call, t, '/data/crm/contacts', contact(t, r))) },
  {
    name: 'PATCH /data/crm/contacts/:id', family: 'data: write', weight: 2,
    send: (call, t, r) => call('PATCH', `/v1/data/crm/contacts/${any(t.contacts, r)}`, json(t.account.token), JSON.stringify({ age: 18 + Math.floor(r() * 60) })),
  },
  { name: 'GET /files/:id', family: 'files: read', weight: 7, send: (call, t, r) => get(call, t, `/files/${any(t.files, r)}`) },
  { name: 'GET /files', family: 'files: read', weight: 3, send: (call, t) => get(call, t, '/files?page_size=20') },
  { name: 'POST /files/upload', family: 'files: upload', weight: 1.5, send: (call, t) => upload(call, t) },
  {
    name: 'POST /events/publish', family: 'events: publish', weight: 5,
    send: (call, t) => post(call, t, '/events/publish', { type: 'crm.contact.created', data: { id: newId(), firstName: 'Ada', lastName: 'Lovelace' } }, newId()),
  },
  { name: 'GET /audit/records', family: 'audit: read', weight: 6, send: (call, t) => get(call, t, '/audit/records?page_size=20') },
  {
    name: 'POST /audit/records', family: 'audit: write', weight: 3,
    send: (call, t) => post(call, t, '/audit/records', { action: 'bench.step', entityType: 'bench', entityId: t.account.tenantId, after: { at: Date.now() } }),
  },
  { name: 'GET /auth/me', family: 'identity: read', weight: 10, send: (call, t) => get(call, t, '/auth/me') },
  { name: 'GET /users', family: 'identity: read', weight: 4, send: (call, t) => get(call, t, '/users?page_size=20') },
  { name: 'POST /auth/login', family: 'identity: login', weight: 1.5, send: (call, t) => login(call, t) },
  { name: 'GET /billing/usage', family: 'billing: read', weight: 5, send: (call, t) => get(call, t, '/billing/usage') },
];

/** An operation of the mix drawn by its weight. */
export function draw(random: () => number): Operation {
  const total = MIX.reduce((sum, operation) => sum + operation.weight, 0);
  let left = random() * total;
  for (const operation of MIX) {
    left -= operation.weight;
    if (left < 0) return operation;
  }
  return MIX[MIX.length - 1];
}

/** An answer that must succeed during set-up. */
async function must(answer: Promise<Answer>, what: string): Promise<Answer> {
  const { status, text } = await answer;
  if (status >= 300 || status < 200) throw new Error(`${what} answered ${status}: ${text}`);
  return { status, text };
}

/** Until the upload's scan ends: a file waiting for it is 404 to the API, an available one redirects to its bytes. */
async function availableFile(call: Call, tenant: BenchTenant): Promise<string> {
  const { id } = JSON.parse((await must(upload(call, tenant), 'upload')).text) as { id: string };
  for (let polls = 0; polls < 600; polls += 1) {
    const { status } = await get(call, tenant, `/files/${id}`);
    if (status === 302) return id;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`file ${id} not available after 2 minutes`);
}

/** `count` tenants set up `parallel` at a time, with what the mix reads. */
export async function benchTenants(baseUrl: string, owner: DatabasePool, count: number, parallel: number): Promise<BenchTenant[]> {
  const call = httpCaller(baseUrl);
  const tenants: BenchTenant[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < count) {
      next += 1;
      const [base] = await setUpTenants(baseUrl, owner, 1, 1);
      const tenant: BenchTenant = {
        account: base.account, tokenAt: Date.now(), wallets: base.pairs[0], holdWallet: base.holdWallet, held: [], companies: [], contacts: [], files: [],
      };
      for (let c = 0; c < 3; c += 1) keep(tenant.companies, await must(post(call, tenant, '/data/crm/companies', { name: `Company ${c}`, country: 'NZ' }), 'company'));
      for (let c = 0; c < 20; c += 1) keep(tenant.contacts, await must(post(call, tenant, '/data/crm/contacts', contact(tenant, Math.random)), 'contact'));
      tenant.files.push(await availableFile(call, tenant), await availableFile(call, tenant));
      tenants.push(tenant);
      if (tenants.length % 10 === 0 || tenants.length === count) process.stderr.write(`set up ${tenants.length} of ${count} tenants\n`);
    }
  }));
  return tenants;
}
