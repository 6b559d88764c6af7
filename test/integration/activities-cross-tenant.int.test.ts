import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import type { ColdExportJob } from '../../activities/audit/cold-export.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { createObjectStore, removeObjects, type ObjectStore } from '../../common/object-store';
import { contextActivityInterceptors } from '../../common/temporal/activity-context';
import { requestHash } from '../../services/idempotency/idempotent';
import { createSmtpSender } from '../../services/notify/smtp';
import { exportJobId } from '../../services/audit/cold-storage';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { queueExportJob } from '../../db/queries/audit/audit-export.queries';
import { withTenant } from '../../db/tenant';
import type { HoldInput, TransactionView, TransferInput } from '../../workflows/money/money.messages';
import type { SubscriptionView } from '../../workflows/billing/billing.messages';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { stageFile, type StagedFile } from '../helpers/files-scan';
import { fundedWallet } from '../helpers/money-flows';

/**
 * Tenant scoping twice in the workers (issue 15): every activity that takes ids is called for tenant
 * A with tenant B's ids (wallets, a hold, a subscription, an export job). Each refuses as not found,
 * or changes nothing, and tenant B's rows, balances and outbox are exactly as they were. A lock on
 * B's wallet held meanwhile shows the refusal never waited for it: another tenant's row is not even
 * locked. Each layer is shown on its own: the activities on the owner role (no row-level security)
 * hold by their queries' tenant predicate alone, and the application role the workers use hides
 * and never locks B's row even for a statement that names no tenant.
 */
jest.setTimeout(60_000);

const NO_LIMITS = { planId: 'test', maxTxAmount: 0, maxBalance: 0 };

let owner: DatabasePool;
let app: DatabasePool;
/** The pools workers/main.ts gives the activities; the same activities with the owner role in the application role's place. */
let onAppRole: ReturnType<typeof createActivities>;
let onOwnerRole: ReturnType<typeof createActivities>;
const smtp = createSmtpSender(config().mail);

/** Runs an activity as a worker does: with the propagated-context interceptor (actorOf reads it). */
function run<A extends unknown[], R>(activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
  return new MockActivityEnvironment(undefined, { interceptors: [contextActivityInterceptors] }).run(activity, ...args);
}

/** A tenant with a member and an active subscription, written as the owner role. */
async function seedTenant(): Promise<{ tenantId: string; userId: string }> {
  const tenantId = newId();
  const userId = newId();
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'cross-tenant test')`);
    await tx.query(sql.unsafe`INSERT INTO users (id, email, email_verified) VALUES (${userId}, ${`${userId}@example.test`}, true)`);
    await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
    await tx.query(sql.unsafe`
      INSERT INTO subscriptions (id, tenant_id, plan_id, status, current_period_start, current_period_end)
      VALUES (${newId()}, ${tenantId}, 'starter', 'active', now(), now() + interval '30 days')
    `);
  });
  return { tenantId, userId };
}

const idempotency = (scope: string, request: unknown) => ({ scope, key: newId(), requestHash: requestHash(request), ttlHours: 24 });

function holdInput(tenantId: string, walletId: string, amount: number): HoldInput {
  return {
    tenantId, walletId, amount, currency: 'USD', reason: 'cross-tenant', ttlSeconds: 3600, limits: NO_LIMITS, maxOpenHolds: 100,
    idempotency: idempotency('POST /wallets/:id/hold', { walletId, amount }),
  };
}

function transferInput(tenantId: string, fromWalletId: string, toWalletId: string, amount: number): TransferInput {
  return {
    tenantId, fromWalletId, toWalletId, amount, currency: 'USD', reason: 'cross-tenant', limits: NO_LIMITS,
    idempotency: idempotency('POST /wallets/transfer', { fromWalletId, toWalletId, amount }),
  };
}

/** Everything of tenant B an activity could touch, read as the owner (no row-level security). */
async function stateOf(tenantId: string): Promise<unknown> {
  const [wallets, transactions, postings, outbox, keys, subscription, exportJobs, files, stagedObjects] = await Promise.all([
    owner.any(sql.unsafe`SELECT * FROM wallets WHERE tenant_id = ${tenantId} ORDER BY id`),
    owner.any(sql.unsafe`SELECT * FROM money_transactions WHERE tenant_id = ${tenantId} ORDER BY id`),
    owner.oneFirst(sql.unsafe`SELECT count(*) FROM ledger_postings WHERE tenant_id = ${tenantId}`),
    owner.oneFirst(sql.unsafe`SELECT count(*) FROM outbox_events WHERE tenant_id = ${tenantId}`),
    owner.oneFirst(sql.unsafe`SELECT count(*) FROM idempotency_keys WHERE tenant_id = ${tenantId}`),
    owner.one(sql.unsafe`SELECT * FROM subscriptions WHERE tenant_id = ${tenantId}`),
    owner.any(sql.unsafe`SELECT * FROM audit_export_jobs WHERE tenant_id = ${tenantId} ORDER BY id`),
    owner.any(sql.unsafe`SELECT * FROM files WHERE tenant_id = ${tenantId} ORDER BY id`),
    store.s3.statObject(store.bucket, fileB.stagingKey).then((stat) => stat.size),
  ]);
  return { wallets, transactions, postings, outbox, keys, subscription, exportJobs, files, stagedObjects };
}

/**
 * Runs the attempt while another transaction holds tenant B's wallet locked: an attempt that locks
 * (or even waits on) B's row waits for that transaction until it gives the lock up, which happens
 * only once this has decided. PostgreSQL is asked meanwhile whether anything waits for the holder
 * (pg_blocking_pids), so the wait is seen as it happens, not inferred from a slow answer;
 * `patienceMs` is only the backstop.
 */
async function whileLocked<T>(walletId: string, attempt: () => Promise<T>, patienceMs = 20_000): Promise<PromiseSettledResult<T> | 'waited'> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  let locked!: (pid: number) => void;
  const isLocked = new Promise<number>((resolve) => { locked = resolve; });
  const holder = owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT 1 FROM wallets WHERE id = ${walletId} FOR UPDATE`);
    locked(Number(await tx.oneFirst(sql.unsafe`SELECT pg_backend_pid()`)));
    await released;
  });
  const holderPid = await isLocked;
  const waitsForHolder = async () => Boolean(await owner.oneFirst(sql.unsafe`
    SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE ${holderPid} = ANY(pg_blocking_pids(pid)))
  `));
  try {
    const outcome = Promise.allSettled([attempt()]).then(([settled]) => settled);
    for (const deadline = Date.now() + patienceMs; Date.now() < deadline;) {
      const settled = await Promise.race([outcome, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20))]);
      if (settled) return settled;
      if (await waitsForHolder()) return 'waited';
    }
    return 'waited';
  } finally {
    release();
    await holder;
  }
}

function expectNotFound(result: PromiseSettledResult<unknown> | 'waited'): void {
  expect(result).not.toBe('waited');
  expect(result).toMatchObject({ status: 'rejected', reason: { type: 'not-found' } });
}

let a: { tenantId: string; userId: string };
let b: { tenantId: string; userId: string };
let walletA: string;
let walletB: string;
let emptyWalletB: string;
let holdB: TransactionView;
let subscriptionB: SubscriptionView;
let jobB: ColdExportJob;
let store: ObjectStore;
let fileB: StagedFile;

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'cross-tenant-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 4, name: 'cross-tenant-app' });
  store = createObjectStore(config().s3);
  const common = { fleetPool: owner, logger: createLogger('test', 'silent'), objectStore: store, smtp };
  onAppRole = createActivities({ appPool: app, ...common });
  onOwnerRole = createActivities({ appPool: owner, ...common });
  [a, b] = await Promise.all([seedTenant(), seedTenant()]);
  [walletA, walletB, emptyWalletB] = await Promise.all([
    fundedWallet(app, a.tenantId, a.userId, 1000),
    fundedWallet(app, b.tenantId, b.userId, 1000),
    fundedWallet(app, b.tenantId, b.userId, 0),
  ]);
  holdB = await run(onAppRole.money.placeHold, holdInput(b.tenantId, walletB, 100));
  subscriptionB = await run(onAppRole.billing.loadSubscription, b.tenantId);
  const range = { since: new Date(Date.now() - 86_400_000).toISOString(), until: new Date().toISOString() };
  jobB = { tenantId: b.tenantId, jobId: exportJobId(b.tenantId, range, 'json'), format: 'json', ...range };
  await queueExportJob(owner, { tenantId: b.tenantId, id: jobB.jobId, format: 'json', range, requestedBy: null });
  fileB = await stageFile(owner, store, b.tenantId, { mimeType: 'text/plain', content: Buffer.from('tenant B only\n') });
});

afterAll(async () => {
  await removeObjects(store, [fileB.stagingKey]);
  smtp.close();
  await Promise.all([owner?.end(), app?.end()]);
});

describe.each([
  ['on the application role (as the workers run them)', () => onAppRole],
  ['on the owner role: the queries\' tenant predicate alone', () => onOwnerRole],
])('activities called with another tenant\'s ids, %s', (_setup, activitiesOf) => {
  let activities: ReturnType<typeof createActivities>;
  let before: unknown;
  beforeEach(async () => {
    activities = activitiesOf();
    before = await stateOf(b.tenantId);
  });
  afterEach(async () => {
    expect(await stateOf(b.tenantId)).toEqual(before);
  });

  it('placeHold on another tenant\'s wallet: not found, without locking it', async () => {
    expectNotFound(await whileLocked(walletB, () => run(activities.money.placeHold, holdInput(a.tenantId, walletB, 10))));
  });

  it('transfer into or out of another tenant\'s wallet: not found, without locking it', async () => {
    expectNotFound(await whileLocked(walletB, () => run(activities.money.transfer, transferInput(a.tenantId, walletA, walletB, 10))));
    expectNotFound(await whileLocked(walletB, () => run(activities.money.transfer, transferInput(a.tenantId, walletB, walletA, 10))));
    expectNotFound(await whileLocked(walletB, () => run(activities.money.transfer, transferInput(a.tenantId, walletB, emptyWalletB, 10))));
    // Tenant A's own wallet is untouched by the refused transfers too.
    expect(await owner.oneFirst(sql.unsafe`SELECT available FROM wallets WHERE id = ${walletA}`)).toBe(1000);
  });

  it('settleHold and expireHold of another tenant\'s hold: not found, without locking its wallet', async () => {
    for (const action of ['confirm', 'cancel'] as const) {
      const request = { tenantId: a.tenantId, holdId: holdB.id, action, idempotency: idempotency(action, { holdId: holdB.id, action }) };
      expectNotFound(await whileLocked(walletB, () => run(activities.money.settleHold, request)));
    }
    expectNotFound(await whileLocked(walletB, () => run(activities.money.expireHold, { tenantId: a.tenantId, holdId: holdB.id })));
  });

  it('mirrorSubscription of another tenant\'s subscription writes nothing', async () => {
    const change = {
      subscription: { ...subscriptionB, tenantId: a.tenantId, status: 'canceled' as const, version: subscriptionB.version + 100 },
      previous: { status: subscriptionB.status, planId: subscriptionB.planId, version: subscriptionB.version },
      reason: 'cross-tenant',
    };
    await expect(run(activities.billing.mirrorSubscription, change)).resolves.toBe(false);
  });

  it('the cold export\'s job updates of another tenant\'s job change nothing', async () => {
    const foreign = { ...jobB, tenantId: a.tenantId };
    await run(activities.audit.markColdExportRunning, foreign);
    await run(activities.audit.markColdExportFailed, foreign, 'cross-tenant');
    await run(activities.audit.markColdExportCompleted, foreign, { objectKey: `${b.tenantId}/x`, records: 1, bytes: 1 }, new Date().toISOString());
  });

  it('the scan workflow\'s steps on another tenant\'s file: not found, its row and staged object untouched', async () => {
    const foreign = { tenantId: a.tenantId, fileId: fileB.fileId };
    await expect(run(activities.files.scanAndPromoteFile, foreign)).rejects.toMatchObject({ type: 'file-not-found' });
    await expect(run(activities.files.scanStagedFile, foreign)).rejects.toMatchObject({ type: 'file-not-found' });
    await expect(run(activities.files.promoteFile, foreign)).rejects.toMatchObject({ type: 'file-not-found' });
    await expect(run(activities.files.generateThumbnails, foreign)).rejects.toMatchObject({ type: 'file-not-found' });
    // Seen from tenant A the file does not exist: rejecting it only clears A's own staging key.
    await expect(run(activities.files.rejectFile, foreign, { reason: 'staging-expired', scanned: false }))
      .resolves.toEqual({ status: 'rejected', reason: 'staging-expired', originalName: null, image: false });
  });
});

describe('row-level security on the application role', () => {
  it('hides another tenant\'s wallet and never locks it, even for a statement that names no tenant', async () => {
    const seen = await whileLocked(walletB, () => withTenant(app, a.tenantId, (tx) => tx.any(sql.unsafe`
      SELECT id FROM wallets WHERE id = ${walletB} FOR UPDATE
    `)));
    expect(seen).toEqual({ status: 'fulfilled', value: [] });
  });

  it('the activities still work for the tenant itself: B settles its own hold', async () => {
    const view = await run(onAppRole.money.settleHold, {
      tenantId: b.tenantId, holdId: holdB.id, action: 'cancel', idempotency: idempotency('cancel', { holdId: holdB.id }),
    });
    expect(view).toMatchObject({ type: 'cancel', referenceTransactionId: holdB.id });
    expect(await owner.oneFirst(sql.unsafe`SELECT available FROM wallets WHERE id = ${walletB}`)).toBe(1000);
  });
});
