import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import { apiClient } from '../lib/load';
import { BENCH_PASSWORD, fundedWallet, moneyApi, verifiedAccount, type BenchAccount } from '../lib/money';

/**
 * The mixed load of `npm run faults`, as well-behaved clients send it over several tenants: balance
 * reads, credits, debits, transfers, holds (half confirmed later, half left to expire), crm record
 * writes through the module's hook (a negative age is refused by it), uploads scanned by ClamAV,
 * event publishes, audit writes, logins, and new users, whose `auth.user.created` crm's consumer
 * group turns into a contact. What the invariants need is noted as it is answered.
 */

export const OPERATIONS = ['read', 'credit', 'debit', 'transfer', 'hold', 'confirm', 'record', 'upload', 'publish', 'audit', 'login', 'user'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface Tenant {
  account: BenchAccount;
  pairs: [string, string][];
  holdWallet: string;
  heldIds: string[];
}

export interface Failure { at: number; operation: Operation; reason: string }

/** A keyed request that got its answer: sent again at the end, it must get the same one. */
export interface Answered { tenant: Tenant; path: string; body: unknown; key: string; answer: string }

/** What a run saw, for the report and the invariants. */
export class LoadRecord {
  readonly started = Date.now();
  readonly failures: Failure[] = [];
  readonly attempts = Object.fromEntries(OPERATIONS.map((operation) => [operation, 0])) as Record<Operation, number>;
  readonly successes = Object.fromEntries(OPERATIONS.map((operation) => [operation, 0])) as Record<Operation, number>;
  /** Money and publish requests with their Idempotency-Key and what they were answered (a transaction, an event). */
  readonly answered: Answered[] = [];
  readonly uploads: { tenantId: string; fileId: string }[] = [];
  /** Audit records the API accepted (202) by id. */
  readonly auditIds: { tenantId: string; auditId: string }[] = [];
  /** Users the API created (or, asked again, said exist): each must become exactly one crm contact. */
  readonly users: { tenantId: string; email: string }[] = [];

  elapsed(): number {
    return (Date.now() - this.started) / 1000;
  }

  fail(operation: Operation, reason: string): void {
    this.failures.push({ at: this.elapsed(), operation, reason });
  }
}

export interface Answer { status: number; retryAfter: number; body: unknown }

/** The load's HTTP client against one base URL (the gateway, or the balancer in the cluster profile). */
export class Client {
  constructor(private readonly baseUrl: string, private readonly record: LoadRecord, private readonly until: number) {}

  /**
   * One request. What answers may be the balancer's own page (an HTML 503 while no gateway is up),
   * so a body that is not JSON is kept as text; only a request that got no answer rejects.
   */
  async call(method: string, path: string, body: unknown, token?: string, key?: string): Promise<Answer> {
    const form = body instanceof FormData;
    const response = await fetch(`${this.baseUrl}/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined || form ? {} : { 'content-type': 'application/json' }),
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    }).catch((error: Error) => {
      const cause = error.cause as NodeJS.ErrnoException | undefined;
      throw new Error(cause?.code ?? cause?.message ?? error.message);
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* the balancer's HTML page, kept as text */ }
    return { status: response.status, retryAfter: Number(response.headers.get('retry-after')), body: parsed };
  }

  /**
   * A request as a well-behaved client sends it: the same body (and key, when it has one) until an
   * answer that is not a failure of the platform (no answer, 5xx, 429), backing off or waiting the
   * Retry-After given; `settle` turns that answer into what the run notes (undefined: a business
   * refusal, or a job that never finished). Gives up once the run's time and a grace period are over.
   */
  async persist<T>(
    operation: Operation, send: () => Promise<Answer>, settle: (answer: Answer) => Promise<T | undefined> | T | undefined,
  ): Promise<T | undefined> {
    for (let attempt = 0; this.record.elapsed() < this.until; attempt += 1) {
      this.record.attempts[operation] += 1;
      let answer: Answer | undefined;
      let reason: string;
      try {
        answer = await send();
        reason = `${answer.status}`;
      } catch (error) {
        reason = (error as Error).message;
      }
      if (answer && answer.status < 500 && answer.status !== 429) {
        const settled = await settle(answer);
        if (settled !== undefined) this.record.successes[operation] += 1;
        if (settled !== undefined || answer.status !== 202) return settled;
        reason = 'job unfinished';
      }
      this.record.fail(operation, reason);
      const retryAfter = answer?.retryAfter ?? NaN;
      await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : Math.min(4000, 100 * 2 ** attempt));
    }
    return undefined;
  }

  /** A request sent once (it has no Idempotency-Key to repeat it safely): its failure is counted. */
  async once(operation: Operation, send: () => Promise<Answer>, accept: (answer: Answer) => boolean): Promise<void> {
    this.record.attempts[operation] += 1;
    try {
      const answer = await send();
      if (accept(answer)) this.record.successes[operation] += 1;
      else this.record.fail(operation, `${answer.status}`);
    } catch (error) {
      this.record.fail(operation, (error as Error).message);
    }
  }

  /** The transaction a money answer names, or the job's result when it answered 202. */
  async transactionOf(answer: Answer, token: string): Promise<string | undefined> {
    // Credits and debits answer the operation's transactionId; transfers and holds, the transaction itself.
    const body = answer.body as { id?: string; transactionId?: string; jobId?: string };
    if (answer.status === 200 || answer.status === 201) return body.transactionId ?? body.id;
    if (answer.status !== 202 || !body.jobId) return undefined;
    for (let waited = 0; waited < 120_000; waited += 500) {
      const job = await this.call('GET', `/jobs/${body.jobId}`, undefined, token).catch(() => undefined);
      const state = job?.body as { status?: string; result?: { id?: string } } | undefined;
      if (state?.status === 'completed') return state.result?.id;
      if (state?.status === 'failed' || state?.status === 'canceled') return undefined;
      await sleep(500);
    }
    return undefined;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The run's tenants: each an owner with a verified e-mail on the enterprise plan (the free plan's
 * two users and 1 000 events a day would refuse the load), crm installed, and funded wallets.
 */
export async function setUpTenants(baseUrl: string, owner: DatabasePool, count: number, walletPairs: number): Promise<Tenant[]> {
  const api = moneyApi(baseUrl);
  const call = apiClient(baseUrl);
  const tenants: Tenant[] = [];
  for (let t = 0; t < count; t += 1) {
    const account = await verifiedAccount(api, owner);
    await owner.query(sql.unsafe`UPDATE subscriptions SET plan_id = 'enterprise' WHERE tenant_id = ${account.tenantId}`);
    await call('POST', '/modules/crm/install', undefined, account.token);
    const pairs: [string, string][] = [];
    for (let c = 0; c < walletPairs; c += 1) {
      pairs.push([await fundedWallet(api, account, `a${c}`, 1_000_000), await fundedWallet(api, account, `b${c}`, 1_000_000)]);
    }
    tenants.push({ account, pairs, holdWallet: await fundedWallet(api, account, 'holds', 1_000_000), heldIds: [] });
  }
  return tenants;
}

/** One client's loop until `seconds` have passed: an operation drawn with `random` at each step. */
export async function runClient(
  client: Client, record: LoadRecord, tenant: Tenant, pair: [string, string], seconds: number, random: () => number,
): Promise<void> {
  const { token, tenantId } = tenant.account;
  const keyed = (operation: Operation, path: string, body: unknown) => {
    const key = newId();
    const send = () => client.call('POST', path, body, token, key);
    return client.persist(operation, send, async (answer) => {
      const transactionId = await client.transactionOf(answer, token);
      if (transactionId) record.answered.push({ tenant, path, body, key, answer: transactionId });
      return transactionId;
    });
  };
  for (let step = 0; record.elapsed() < seconds; step += 1) {
    const roll = random();
    const [from, to] = step % 2 === 0 ? pair : [pair[1], pair[0]];
    if (roll < 0.25) {
      await client.once('read', () => client.call('GET', `/wallets/${from}/balance`, undefined, token), (answer) => answer.status === 200);
    } else if (roll < 0.3) {
      await keyed('credit', `/wallets/${from}/credit`, { amount: 1 });
    } else if (roll < 0.35) {
      await keyed('debit', `/wallets/${to}/debit`, { amount: 1 });
    } else if (roll < 0.5) {
      await keyed('transfer', '/transfers', { fromWalletId: from, toWalletId: to, amount: 1, currency: 'USD', reason: 'faults' });
    } else if (roll < 0.58) {
      // Half the holds are confirmed later; the others expire by their own timer during the run.
      const confirmLater = random() < 0.5;
      const id = await keyed('hold', `/wallets/${tenant.holdWallet}/hold`, { amount: 1, currency: 'USD', ttl: confirmLater ? '1h' : '20s', reason: 'faults' });
      if (id && confirmLater) tenant.heldIds.push(id);
    } else if (roll < 0.62 && tenant.heldIds.length > 0) {
      await keyed('confirm', `/holds/${tenant.heldIds.shift()!}/confirm`, {});
    } else if (roll < 0.7) {
      // The crm module's before hook refuses a negative age (400): an answer, not a failure.
      const age = random() < 0.1 ? -1 : Math.floor(random() * 90);
      await client.once('record', () => client.call('POST', '/data/crm/contacts', { firstName: 'Fault', lastName: 'Load', age }, token),
        (answer) => answer.status === 201 || (age < 0 && answer.status === 400));
    } else if (roll < 0.76) {
      await upload(client, record, tenant);
    } else if (roll < 0.82) {
      const key = newId();
      const body = { type: 'crm.contact.created', data: { id: newId(), firstName: 'Event', lastName: 'Load' } };
      await client.persist('publish', () => client.call('POST', '/events/publish', body, token, key), (answer) => {
        const eventId = (answer.body as { eventId?: string }).eventId;
        if (eventId) record.answered.push({ tenant, path: '/events/publish', body, key, answer: eventId });
        return eventId;
      });
    } else if (roll < 0.88) {
      const body = { action: 'faults.step', entityType: 'faults', entityId: tenantId, after: { step } };
      await client.once('audit', () => client.call('POST', '/audit/records', body, token), (answer) => {
        const auditId = (answer.body as { auditId?: string }).auditId;
        if (answer.status === 202 && auditId) record.auditIds.push({ tenantId, auditId });
        return answer.status === 202;
      });
    } else if (roll < 0.94) {
      await client.once('login', () => client.call('POST', '/auth/login', { email: tenant.account.email, password: BENCH_PASSWORD }), (answer) => answer.status === 200);
    } else {
      // The same e-mail until the API has an answer: a user created by an attempt whose answer was lost is a 409 the next time.
      const email = `faults.user.${newId()}@example.test`;
      const created = await client.persist('user', () => client.call('POST', '/users', { email, firstName: 'Fault', lastName: 'User' }, token),
        (answer) => (answer.status === 201 || answer.status === 409 ? email : undefined));
      if (created) record.users.push({ tenantId, email });
    }
  }
}

async function upload(client: Client, record: LoadRecord, tenant: Tenant): Promise<void> {
  const form = new FormData();
  form.append('bucket', 'documents');
  form.append('originalName', 'note.txt');
  form.append('file', new Blob([`faults run ${newId()}\n`], { type: 'text/plain' }), 'note.txt');
  await client.once('upload', () => client.call('POST', '/files/upload', form, tenant.account.token), (answer) => {
    const id = (answer.body as { id?: string }).id;
    if (answer.status === 201 && id) record.uploads.push({ tenantId: tenant.account.tenantId, fileId: id });
    return answer.status === 201;
  });
}
