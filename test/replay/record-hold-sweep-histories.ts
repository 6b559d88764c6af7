// Records the committed histories of the hold sweep (test/replay/histories/moneyHoldSweep/) on the
// time-skipping server with the real activity (PostgreSQL, the owner role's look across tenants and
// each expiry in its tenant's transaction), for a tenant of its own: a run that expires a hold still
// held ten minutes past its expiry (its workflow gone, as when terminated by hand), and a run right
// after with nothing due. The generic `npm run record-history` cannot seed a hold without its
// workflow. Run with the project's database env:
//   node -r ./test/helpers/app-swc-register.cjs test/replay/record-hold-sweep-histories.ts
// Payloads are recorded without the codec, as scripts/record-history.ts does: a committed history
// must replay on any machine, without this machine's payload key.
import { createHoldActivities } from '../../activities/money/holds.activities';
import { config } from '../../common/config';
import { newId } from '../../common/ids';
import { createLogger } from '../../common/logger';
import { sql } from '../../db/pool';
import { requestHash } from '../../services/idempotency/idempotent';
import { placeHold, type HoldDeps } from '../../services/money/holds';
import { moneyHoldSweep } from '../../workflows/money/hold-sweep.workflow';
import { MONEY_HOLD_SWEEP_SCHEDULE_ID, moneyHoldSweepSchedule } from '../../workers/schedules';
import { seedFilesTenant } from '../helpers/files-scan';
import { fundedWallet } from '../helpers/money-flows';
import { uniqueTaskQueue } from '../helpers/temporal';
import { createRecordingWorker, executeRecordedRun, recordHistories, writeHistories } from './recording';

recordHistories('record-hold-sweep', async ({ env, owner, app }) => {
  const deps: HoldDeps = { appPool: app, fleetPool: owner, logger: createLogger('record', 'silent') };
  const taskQueue = uniqueTaskQueue('record-money-hold-sweep');
  const worker = await createRecordingWorker(env, taskQueue, createHoldActivities(deps));
  const { args } = moneyHoldSweepSchedule(config().moneyFlows).action;

  // A hold placed as the hold workflow's activity places it (for nobody: no actor to verify), then
  // moved to ten minutes past its expiry, well beyond the sweep's grace of one interval.
  const { tenantId, owner: member } = await seedFilesTenant(owner);
  const walletId = await fundedWallet(app, tenantId, member.id, 1000);
  const key = newId();
  const hold = await placeHold(deps, {
    tenantId, walletId, amount: 400, currency: 'USD', reason: 'recorded for the hold sweep', ttlSeconds: 60,
    limits: { planId: 'test', maxTxAmount: 0, maxBalance: 0 }, maxOpenHolds: 100,
    idempotency: { scope: 'POST /wallets/:id/hold', key, requestHash: requestHash({ walletId, amount: 400, key }), ttlHours: 24 },
  }, { actorId: null, traceId: undefined });
  await owner.query(sql.unsafe`UPDATE money_transactions SET expires_at = now() - interval '10 minutes' WHERE id = ${hold.id}`);

  /** One run as the Schedule starts it (its arguments; an id of the recording's own), its count checked by `expected`. */
  async function record(name: string, expected: (expired: number) => boolean): Promise<[string, string]> {
    const { run, result: expired } = await executeRecordedRun(env.client, name, moneyHoldSweep, {
      taskQueue, workflowId: `${MONEY_HOLD_SWEEP_SCHEDULE_ID}:record-${newId()}`, args,
    });
    // The platform's own Schedule sweeps the same database every minute: a run that raced it says
    // something else than its name, and is not written.
    if (!expected(expired)) throw new Error(`${name} expired ${expired} holds; run the recorder again`);
    return run;
  }

  const recorded = await worker.runUntil(async () => [
    await record('v1-expired', (expired) => expired >= 1),
    await record('v1-nothing-due', (expired) => expired === 0),
  ]);

  await writeHistories(env.client, 'moneyHoldSweep', recorded);
});
