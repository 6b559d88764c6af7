import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { closeLedgerPool, expectLedgerConsistent } from '../../helpers/ledger';
import { balanceOf, credit, debit, moneyAccount } from '../../helpers/money';

/**
 * docs/reference/money.md#rule-3: concurrent debits on one wallet are serialized and the balance never
 * goes below zero. 50 debits of 1 race for 30: exactly 30 succeed, the rest are 400 insufficient-funds.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  // The requests on one wallet queue on its row lock; on a busy CI machine the last of 50 may wait
  // longer than the default 5 s deadline, which this test does not measure.
  gateway = await startTestGateway({ env: { GRPC_CALL_TIMEOUT_MS: '30000' } });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'money-concurrency-test' });
});

afterAll(async () => {
  await closeLedgerPool();
  await gateway?.close();
  await owner?.end();
});

it('lets exactly 30 of 50 parallel debits of 1 through a wallet holding 30', async () => {
  const account = await moneyAccount(gateway, owner);
  expect((await credit(gateway, account, 30)).status).toBe(200);

  const answers = await Promise.all(Array.from({ length: 50 }, () => debit(gateway, account, 1)));

  const succeeded = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status !== 200);
  expect(succeeded).toHaveLength(30);
  expect(refused).toHaveLength(20);
  for (const answer of refused) expect(answer.body).toMatchObject({ status: 400, type: gateway.problemType('insufficient-funds'), available: 0, requested: 1 });
  // Serialized: the 30 balances after are exactly 29 … 0, each once.
  expect(succeeded.map((a) => a.body.balanceAfter.available).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  expect(await balanceOf(gateway, account)).toEqual({ available: 0, pending: 0, frozen: 0 });
  await expectLedgerConsistent(account.tenant.id);
});

it('keeps the ledger whole under interleaved concurrent credits and debits', async () => {
  const account = await moneyAccount(gateway, owner);
  expect((await credit(gateway, account, 100)).status).toBe(200);
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? credit(gateway, account, 3) : debit(gateway, account, 5))));
  // Each answer's problem, if any, is in the failure message.
  expect(answers.filter((a) => a.status !== 200).map((a) => a.body)).toEqual([]);
  expect(await balanceOf(gateway, account)).toEqual({ available: 100 + 20 * 3 - 20 * 5, pending: 0, frozen: 0 });
  await expectLedgerConsistent();
});
