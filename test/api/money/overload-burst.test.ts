import { z } from 'zod';
import { sql } from '../../../db/pool';
import { percentile } from '../../../bench/lib/load';
import { registerAccount } from '../../helpers/identity';
import { expectLedgerConsistent } from '../../helpers/ledger';
import { verifyEmail } from '../../helpers/money';
import { fundedWallet, startMoneyFlowsFixture, type MoneyFlowsFixture } from '../../helpers/money-flows';
import { overloadSend, runOverloadScenario } from '../../helpers/money-overload';

/**
 * The fault test of issue 19, through the real gateway (default in-flight bound, a 30 s deadline) with a
 * worker of its own: one tenant sends 500 transfers at once while another makes steady transfers.
 * The steady tenant sees no 5xx, the bursting one only 2xx, 202 or 429, the money breaker stays
 * closed, and afterwards every key of either tenant resolves to exactly one transaction and the
 * ledger balances. Speed is not asserted (bench/money-overload.bench.ts measures it); the steady tenant's
 * p99 is logged.
 */
jest.setTimeout(300_000);

const BURST = 500;
const STEADY_CLIENTS = 2;

let fixture: MoneyFlowsFixture;

beforeAll(async () => {
  // The default bound, and a deadline for a machine shared with the other suites: in CI the dev
  // server once took 9 s to start workflows whatever the burst, and the steady tenant's p99 reached
  // 20.9 s in one run; a start Temporal has not taken by the deadline answers 504
  // (overload.test.ts checks the deadline's 202; this test judges the bound).
  fixture = await startMoneyFlowsFixture('money-overload-burst', { GRPC_CALL_TIMEOUT_MS: '30000' });
});

afterAll(() => fixture?.close());

it(`serves a steady tenant without 5xx while another bursts ${BURST} transfers, and resolves every key to one transaction`, async () => {
  const bursting = fixture.account;
  const steady = await registerAccount(fixture.gateway);
  await verifyEmail(fixture.owner, steady.user.id);
  const wallets = (tenant: typeof steady, count: number) => Promise.all(Array.from({ length: count }, () =>
    fundedWallet(fixture.app, tenant.tenant.id, tenant.user.id, 10_000)));

  const outcome = await runOverloadScenario({
    send: overloadSend(fixture.gateway.baseUrl),
    burst: { token: bursting.accessToken, wallets: await wallets(bursting, 64) },
    steady: { token: steady.accessToken, wallets: await wallets(steady, 2 * STEADY_CLIENTS) },
    burstSize: BURST, steadyClients: STEADY_CLIENTS, steadyPauseMs: 100,
  });
  const ms = (p: number) => percentile(outcome.steadyLatencies, p).toFixed(0);
  console.log(`steady tenant during a burst of ${BURST}: ${outcome.steadyLatencies.length} transfers, p50 ${ms(50)} ms, `
    + `p99 ${ms(99)} ms (${JSON.stringify(outcome.steadyStatuses)}); bursting tenant's answers ${JSON.stringify(outcome.burstStatuses)}`);

  const statuses = (counts: Record<number, number>) => Object.keys(counts).map(Number).sort();
  expect(statuses(outcome.steadyStatuses).filter((status) => status >= 500)).toEqual([]);
  expect(statuses(outcome.burstStatuses).filter((status) => ![200, 202, 429].includes(status))).toEqual([]);
  // The bound took part: 500 at once cannot all be in flight.
  expect(outcome.burstStatuses[429]).toBeGreaterThan(0);
  expect(fixture.gateway.runtime.gateway.breakers.states()['service:money']).not.toBe('open');

  // Exactly one transaction per key of either tenant, and it is what replaying the key answers.
  const keys = [...outcome.burstKeys, ...outcome.steadyKeys];
  const rows = await fixture.owner.any(sql.type(z.object({ key: z.string(), id: z.string(), rows: z.coerce.number() }))`
    SELECT idempotency_key AS key, min(id::text) AS id, count(*) AS rows FROM money_transactions
    WHERE tenant_id IN (${bursting.tenant.id}, ${steady.tenant.id}) AND idempotency_key = ANY(${sql.array(keys, 'text')})
    GROUP BY idempotency_key
  `);
  expect(rows).toHaveLength(keys.length);
  expect(rows.filter((row) => row.rows !== 1)).toEqual([]);
  for (const row of rows) expect(outcome.transactions.get(row.key)).toMatchObject({ id: row.id, type: 'transfer', amount: 1, idempotencyKey: row.key });
  await expectLedgerConsistent(bursting.tenant.id);
  await expectLedgerConsistent(steady.tenant.id);
});
