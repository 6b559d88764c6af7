import { newId } from '../../../common/ids';
import { postings, recordMovement } from '../../../services/money/movements';
import { lockWallet } from '../../../services/money/wallet-operations';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { withTenant } from '../../../db/tenant';
import { updateTransactionStatus } from '../../../db/queries/money/transactions.queries';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { closeLedgerPool, expectLedgerConsistent } from '../../helpers/ledger';
import { balanceOf, credit, debit, moneyAccount, mutate, send, type MoneyAccount } from '../../helpers/money';
import { addMember } from '../../helpers/rbac';

/**
 * Reversals (docs/reference/money.md#rule-10), route sets A and B: a
 * completed debit or a confirmed hold is credited back once within 365 days; every other state is
 * refused with the documented problem.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'money-reversals-test' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'money-reversals-test-app' });
});

afterAll(async () => {
  await closeLedgerPool();
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

const problem = (suffix: string, status = 400) => ({ type: gateway.problemType(suffix), status });

/** Set A: the original in the path. */
const reverseA = (account: MoneyAccount, originalId: string, key?: string, body: Record<string, unknown> = { reason: 'refund' }) =>
  mutate(gateway, account.accessToken, `/transactions/${originalId}/reversal`, body, key);

/** Set B: the wallet in the path, the original in the body. */
const reverseB = (account: MoneyAccount, originalId: string, key?: string, walletId = account.wallet.id) =>
  mutate(gateway, account.accessToken, `/wallets/${walletId}/reversal`, { originalTransactionId: originalId, reason: 'refund' }, key);

/**
 * A hold in the given state, written with the money building blocks the hold workflow uses (the
 * hold routes belong to the workflow half of the issue): held; confirmed (frozen leaves the
 * platform); canceled (frozen back to available).
 */
async function holdIn(account: MoneyAccount, amount: number, state: 'held' | 'confirmed' | 'canceled'): Promise<string> {
  const actor = { tenantId: account.tenant.id, actorId: account.user.id };
  return withTenant(app, account.tenant.id, async (tx) => {
    const { transaction: hold } = await recordMovement(tx, actor, {
      wallet: await lockWallet(tx, account.tenant.id, account.wallet.id), delta: { available: -amount, frozen: amount },
      transaction: { type: 'hold', status: 'held', amount, reason: 'hold', meta: {}, idempotencyKey: newId() },
      postings: postings.hold(account.wallet.id, amount),
    });
    if (state === 'held') return hold.id;
    const settle = state === 'confirmed'
      ? { type: 'confirm' as const, delta: { frozen: -amount }, postings: postings.confirm(account.wallet.id, amount) }
      : { type: 'cancel' as const, delta: { frozen: -amount, available: amount }, postings: postings.cancel(account.wallet.id, amount) };
    await recordMovement(tx, actor, {
      wallet: await lockWallet(tx, account.tenant.id, account.wallet.id), delta: settle.delta,
      transaction: { type: settle.type, status: 'completed', amount, reason: state, meta: {}, idempotencyKey: newId(), referenceTransactionId: hold.id },
      postings: settle.postings,
    });
    await updateTransactionStatus(tx, account.tenant.id, hold.id, state);
    return hold.id;
  });
}

async function fundedAccount(amount = 1000): Promise<MoneyAccount> {
  const account = await moneyAccount(gateway, owner);
  expect((await credit(gateway, account, amount)).status).toBe(200);
  return account;
}

describe.each([['A', reverseA], ['B', reverseB]] as const)('route set %s', (_set, reverse) => {
  it('credits back a completed debit with a counter-transaction and marks the original reversed', async () => {
    const account = await fundedAccount();
    const debited = await debit(gateway, account, 300);
    const reversed = await reverse(account, debited.body.transactionId);
    expect(reversed.status).toBe(200);
    expect(reversed.body).toMatchObject({
      id: expect.any(String), walletId: account.wallet.id, type: 'reversal', status: 'completed', amount: 300,
      referenceTransactionId: debited.body.transactionId, reversed: false, reason: 'refund',
      balanceAfter: { available: 1000, pending: 0, frozen: 0 },
    });
    const original = await send(gateway, 'GET', `/transactions/${debited.body.transactionId}`, account.accessToken);
    expect(original.body).toMatchObject({ reversed: true, status: 'reversed' });
    expect(await balanceOf(gateway, account)).toEqual({ available: 1000, pending: 0, frozen: 0 });

    const again = await reverse(account, debited.body.transactionId);
    expect(again.body).toMatchObject(problem('double-reversal'));
    await expectLedgerConsistent(account.tenant.id);
  });

  it('credits back a confirmed hold; refuses a held one (hold-not-reversible) and a canceled one', async () => {
    const account = await fundedAccount();
    const confirmed = await holdIn(account, 200, 'confirmed');
    expect(await balanceOf(gateway, account)).toEqual({ available: 800, pending: 0, frozen: 0 });
    const reversed = await reverse(account, confirmed);
    expect(reversed.status).toBe(200);
    expect(reversed.body).toMatchObject({ type: 'reversal', amount: 200, referenceTransactionId: confirmed });
    expect(await balanceOf(gateway, account)).toEqual({ available: 1000, pending: 0, frozen: 0 });

    const held = await holdIn(account, 50, 'held');
    expect((await reverse(account, held)).body).toMatchObject(problem('hold-not-reversible'));
    const canceled = await holdIn(account, 60, 'canceled');
    expect((await reverse(account, canceled)).body).toMatchObject(problem('transaction-not-reversible'));
    expect(await balanceOf(gateway, account)).toEqual({ available: 950, pending: 0, frozen: 50 });
    await expectLedgerConsistent(account.tenant.id);
  });

  it('refuses a credit, a reversal, and a debit older than the window', async () => {
    const account = await fundedAccount();
    const credited = await credit(gateway, account, 10);
    expect((await reverse(account, credited.body.transactionId)).body).toMatchObject(problem('transaction-not-reversible'));
    const debited = await debit(gateway, account, 10);
    const counter = await reverse(account, debited.body.transactionId);
    expect((await reverse(account, counter.body.id)).body).toMatchObject(problem('transaction-not-reversible'));

    const old = await debit(gateway, account, 5);
    await owner.query(sql.unsafe`UPDATE money_transactions SET created_at = now() - interval '366 days' WHERE id = ${old.body.transactionId}`);
    expect((await reverse(account, old.body.transactionId)).body).toMatchObject(problem('reversal-window-expired'));
    await expectLedgerConsistent(account.tenant.id);
  });

  it('answers 404 for another tenant’s transaction and an unknown one', async () => {
    const [mine, theirs] = await Promise.all([fundedAccount(), fundedAccount()]);
    const debited = await debit(gateway, theirs, 1);
    for (const id of [debited.body.transactionId, newId()]) {
      expect((await reverse(mine, id)).body).toMatchObject(problem('not-found', 404));
    }
    expect(await balanceOf(gateway, theirs)).toEqual({ available: 999, pending: 0, frozen: 0 });
  });

  it('replays a repeated key and refuses racing reversals of one original with double-reversal', async () => {
    const account = await fundedAccount();
    const debited = await debit(gateway, account, 100);
    const key = newId();
    const first = await reverse(account, debited.body.transactionId, key);
    const replay = await reverse(account, debited.body.transactionId, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);

    const other = await debit(gateway, account, 100);
    const racing = await Promise.all(Array.from({ length: 5 }, () => reverse(account, other.body.transactionId)));
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
    for (const refused of racing.filter((r) => r.status !== 200)) expect(refused.body).toMatchObject(problem('double-reversal'));
    expect(await balanceOf(gateway, account)).toEqual({ available: 1000, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });
});

describe('route-set specifics', () => {
  it('set B: a transaction of another wallet of the tenant is 404', async () => {
    const account = await fundedAccount();
    const debited = await debit(gateway, account, 1);
    const second = await mutate(gateway, account.accessToken, '/wallets', { userId: account.user.id, currency: 'USD', label: 'two' });
    expect((await reverseB(account, debited.body.transactionId, undefined, second.body.id)).body).toMatchObject(problem('not-found', 404));
  });

  it('set A: a body naming another original is 400; both need an Idempotency-Key and money.reverse', async () => {
    const account = await fundedAccount();
    const debited = await debit(gateway, account, 1);
    const mismatch = await reverseA(account, debited.body.transactionId, undefined, { originalTransactionId: newId() });
    expect(mismatch.body).toMatchObject(problem('validation-error'));
    const noKey = await send(gateway, 'POST', `/transactions/${debited.body.transactionId}/reversal`, account.accessToken, {});
    expect(noKey.body).toMatchObject({ ...problem('validation-error'), errors: [{ field: 'Idempotency-Key' }] });
    const member = await addMember(gateway, owner, account.tenant.id, 'member');
    const forbidden = await mutate(gateway, member.token, `/transactions/${debited.body.transactionId}/reversal`, {});
    expect(forbidden.status).toBe(403);
  });
});
