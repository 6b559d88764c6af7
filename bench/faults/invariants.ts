import { execFileSync } from 'node:child_process';
import type { Client as TemporalClient } from '@temporalio/client';
import { z } from 'zod';
import { repoRoot } from '../../common/paths';
import { sql, type DatabasePool } from '../../db/pool';
import type { Client, LoadRecord } from './load';
import { sleep } from './load';

/**
 * What must hold after a run of `npm run faults`, however its faults fell. Each check is split in two:
 * reading the facts (the API asked again, PostgreSQL, Temporal's visibility) and judging them, a
 * pure function that test/unit/faults/invariants.test.ts shows failing on the facts a broken
 * platform would leave (an answer changed on retry, a doubled movement, a lost or doubled event...).
 */

/** A keyed request's first answer and the one it got when sent again at the end. */
export interface Replayed { key: string; path: string; first: string; again: string | undefined }

/** Every Idempotency-Key has the answer it was first given (the same transaction, the same event). */
export function judgeReplays(replayed: readonly Replayed[]): string[] {
  return replayed.filter(({ first, again }) => first !== again)
    .map(({ key, path, first, again }) => `key ${key} (${path}) answered ${again ?? 'nothing'} again, first ${first}`);
}

/** A key and wallet with the number of movements stored under them. */
export interface KeyedMovement { key: string; walletId: string; rows: number }

/** No key moved a wallet twice. */
export function judgeMovements(movements: readonly KeyedMovement[]): string[] {
  return movements.filter(({ rows }) => rows > 1).map(({ key, walletId, rows }) => `key ${key} moved wallet ${walletId} ${rows} times`);
}

/** How many times each of the run's accepted things was stored or handled (audit records by id, contacts by e-mail). */
export function judgeExactlyOnce(what: string, expected: readonly string[], counts: ReadonlyMap<string, number>): string[] {
  return expected.flatMap((id) => {
    const count = counts.get(id) ?? 0;
    return count === 1 ? [] : [`${what} ${id} ${count === 0 ? 'is missing' : `is there ${count} times`}`];
  });
}

/** An open workflow of the run's tenants, and whether what it waits for is still ahead. */
export interface OpenWorkflow { workflowId: string; type: string; rightlyWaiting: boolean }

/** Every workflow of the run is closed, or waits for something still ahead (a hold's TTL, a tenant's subscription). */
export function judgeWorkflows(open: readonly OpenWorkflow[]): string[] {
  return open.filter(({ rightlyWaiting }) => !rightlyWaiting).map(({ workflowId, type }) => `workflow ${workflowId} (${type}) is still running`);
}

/** The facts' sources. */
export interface InvariantDeps {
  owner: DatabasePool;
  client: Client;
  temporal: TemporalClient;
  record: LoadRecord;
  /** How long asynchronous work (scans, the audit intake, consumer groups) may still take. */
  settleMs: number;
}

/** Every check, once the load has stopped and the platform answers again: the violations found. */
export async function checkInvariants(deps: InvariantDeps, tenantIds: readonly string[]): Promise<string[]> {
  return [
    ...judgeReplays(await replayKeys(deps)),
    ...judgeMovements(await keyedMovements(deps.owner, tenantIds)),
    ...verifyTenants(tenantIds),
    ...await settledFiles(deps, tenantIds),
    ...judgeExactlyOnce('audit record', deps.record.auditIds.map(({ auditId }) => auditId), await settledCounts(deps, () => auditCounts(deps))),
    ...judgeExactlyOnce('crm contact of the new user', deps.record.users.map(({ email }) => email), await settledCounts(deps, () => contactCounts(deps))),
    ...judgeWorkflows(await openWorkflows(deps, tenantIds)),
  ];
}

/**
 * Every keyed request sent again, sixteen at a time: a key whose workflow was cached by a killed
 * worker waits for the sticky queue's timeout before another worker takes its task.
 */
async function replayKeys({ client, record }: InvariantDeps): Promise<Replayed[]> {
  const queue = [...record.answered];
  const replayed: Replayed[] = [];
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let request = queue.shift(); request; request = queue.shift()) {
      const { token } = request.tenant.account;
      const answer = await client.call('POST', request.path, request.body, token, request.key);
      const again = request.path === '/events/publish' ? (answer.body as { eventId?: string }).eventId : await client.transactionOf(answer, token);
      replayed.push({ key: request.key, path: request.path, first: request.answer, again });
    }
  }));
  return replayed;
}

function keyedMovements(owner: DatabasePool, tenantIds: readonly string[]): Promise<readonly KeyedMovement[]> {
  return owner.any(sql.type(z.object({ key: z.string(), walletId: z.string(), rows: z.number() }))`
    SELECT idempotency_key AS key, wallet_id AS "walletId", count(*)::int AS rows FROM money_transactions
    WHERE tenant_id = ANY(${sql.array(tenantIds, 'uuid')}) AND idempotency_key IS NOT NULL
    GROUP BY 1, 2`);
}

/** `ledger:verify` and `audit:verify` of every tenant of the run. */
function verifyTenants(tenantIds: readonly string[]): string[] {
  return tenantIds.flatMap((tenantId) => ['ledger:verify', 'audit:verify'].flatMap((check) => {
    try {
      execFileSync('npm', ['run', '-s', check, '--', '--tenant', tenantId], { cwd: repoRoot, stdio: 'pipe' });
      return [];
    } catch (error) {
      return [`${check} of ${tenantId}: ${String((error as { stdout?: Buffer }).stdout ?? error).slice(0, 500)}`];
    }
  }));
}

/** Every upload of the run in one final state (available or rejected), and nothing of the run left in staging. */
async function settledFiles({ owner, record, settleMs }: InvariantDeps, tenantIds: readonly string[]): Promise<string[]> {
  const ids = record.uploads.map((upload) => upload.fileId);
  const unsettled = () => owner.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM files WHERE id = ANY(${sql.array(ids, 'uuid')}) AND status NOT IN ('available', 'rejected')`);
  let waiting = await unsettled();
  for (const end = Date.now() + settleMs; waiting.length > 0 && Date.now() < end; waiting = await unsettled()) await sleep(2000);
  const staged = await owner.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*)::int FROM files WHERE tenant_id = ANY(${sql.array(tenantIds, 'uuid')}) AND status = 'pending_scan'`);
  return [...waiting.map((id) => `file ${String(id)} has no final state`), ...(staged > 0 ? [`${staged} files of the run still in staging`] : [])];
}

/** Counts read until each expected thing is there at least once, or the settle time is over. */
async function settledCounts({ settleMs }: InvariantDeps, read: () => Promise<Map<string, number>>): Promise<Map<string, number>> {
  let counts = await read();
  for (const end = Date.now() + settleMs; Date.now() < end && [...counts.values()].some((count) => count === 0); counts = await read()) await sleep(2000);
  return counts;
}

const counted = z.object({ id: z.string(), count: z.number() });

async function auditCounts({ owner, record }: InvariantDeps): Promise<Map<string, number>> {
  const ids = record.auditIds.map(({ auditId }) => auditId);
  const rows = await owner.any(sql.type(counted)`
    SELECT wanted.id::text AS id, count(stored.id)::int AS count FROM unnest(${sql.array(ids, 'uuid')}) AS wanted(id)
    LEFT JOIN audit_records stored ON stored.id = wanted.id GROUP BY wanted.id`);
  return new Map(rows.map(({ id, count }) => [id, count]));
}

/**
 * crm's group makes a contact of every new user (modules/crm/subscribers.ts): one per e-mail, none
 * lost, none doubled. Read in each tenant's transaction: the module tables' policies bind their owner too.
 */
async function contactCounts({ owner, record }: InvariantDeps): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const tenantId of new Set(record.users.map((user) => user.tenantId))) {
    const emails = record.users.filter((user) => user.tenantId === tenantId).map(({ email }) => email);
    const rows = await owner.transaction(async (tx) => {
      await tx.query(sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true)`);
      return tx.any(sql.type(counted)`
        SELECT wanted.email AS id, count(contact.id)::int AS count FROM unnest(${sql.array(emails, 'text')}) AS wanted(email)
        LEFT JOIN mod_crm.contacts contact ON contact.tenant_id = ${tenantId} AND contact.email = wanted.email AND contact.deleted_at IS NULL
        GROUP BY wanted.email`);
    });
    for (const { id, count } of rows) counts.set(id, count);
  }
  return counts;
}

/**
 * The run's tenants' workflows still running (Temporal's visibility, by the TenantId search
 * attribute), each with whether it rightly waits: a tenant's subscription lives as long as the
 * tenant, and a hold waits for its TTL while its transaction is still held.
 */
async function openWorkflows({ temporal, owner, settleMs }: InvariantDeps, tenantIds: readonly string[]): Promise<OpenWorkflow[]> {
  const query = `TenantId IN (${tenantIds.map((id) => `'${id}'`).join(', ')}) AND ExecutionStatus = 'Running'`;
  const read = async () => {
    const open: OpenWorkflow[] = [];
    for await (const execution of temporal.workflow.list({ query })) {
      open.push({ workflowId: execution.workflowId, type: execution.type, rightlyWaiting: await rightlyWaiting(owner, execution.workflowId, execution.type) });
    }
    return open;
  };
  // Visibility lags the history a little, and scans settle last: read until nothing wrong is left, or the settle time is over.
  let open = await read();
  for (const end = Date.now() + settleMs; Date.now() < end && judgeWorkflows(open).length > 0; open = await read()) await sleep(2000);
  return open;
}

async function rightlyWaiting(owner: DatabasePool, workflowId: string, type: string): Promise<boolean> {
  if (type === 'subscriptionLifecycle') return true;
  if (type !== 'moneyHold') return false;
  // money.hold:<tenantId>:<Idempotency-Key> (services/money/jobs.ts).
  const [, tenantId, key] = workflowId.split(':');
  const held = await owner.maybeOneFirst(sql.type(z.object({ held: z.boolean() }))`
    SELECT status = 'held' AND expires_at > now() AS held FROM money_transactions
    WHERE tenant_id = ${tenantId} AND idempotency_key = ${key} ORDER BY created_at LIMIT 1`);
  return held === true;
}
