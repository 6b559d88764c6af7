import { z } from 'zod';
import { newId } from '../../../common/ids';
import { moveMoney } from '../../../services/money/operations';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { outboxEventsOf, registerAccount } from '../../helpers/identity';
import { closeLedgerPool, expectLedgerConsistent } from '../../helpers/ledger';
import {
  balanceOf, createWallet, credit, debit, moneyAccount, mutate, send, type MoneyAccount,
} from '../../helpers/money';
import { addMember } from '../../helpers/rbac';

/**
 * Credit and debit (docs/reference/money.md): the answer, the ledger behind it, the outbox event and the
 * audit record; every refusal of docs/reference/money.md#errors; Idempotency-Key replays and conflicts.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'money-credit-debit-test' });
});

afterAll(async () => {
  await closeLedgerPool();
  await gateway?.close();
  await owner?.end();
});

const problem = (suffix: string, status: number) => ({ type: gateway.problemType(suffix), status });

describe('credit and debit', () => {
  it('credits, debits and answers {transactionId, type, status, amount, currency, balanceAfter, createdAt}', async () => {
    const account = await moneyAccount(gateway, owner);
    const credited = await credit(gateway, account, 1000);
    expect(credited.status).toBe(200);
    expect(credited.body).toEqual({
      transactionId: expect.any(String), type: 'credit', status: 'completed', amount: 1000, currency: 'USD',
      balanceAfter: { available: 1000, pending: 0, frozen: 0 }, createdAt: expect.any(String),
    });
    const debited = await debit(gateway, account, 300);
    expect(debited.body).toMatchObject({ type: 'debit', status: 'completed', amount: 300, balanceAfter: { available: 700, pending: 0, frozen: 0 } });
    expect(await balanceOf(gateway, account)).toEqual({ available: 700, pending: 0, frozen: 0 });

    const read = await send(gateway, 'GET', `/transactions/${debited.body.transactionId}`, account.accessToken);
    expect(read.body).toEqual({
      id: debited.body.transactionId, walletId: account.wallet.id, type: 'debit', status: 'completed', amount: 300, currency: 'USD',
      reason: 'purchase', idempotencyKey: expect.any(String), referenceTransactionId: null, reversed: false, meta: {},
      balanceAfter: { available: 700, pending: 0, frozen: 0 }, createdAt: debited.body.createdAt,
    });

    // Outbox: one money event per operation on platform.money.events keyed by the wallet, and an audit record each.
    const events = await outboxEventsOf(owner, account.tenant.id);
    const money = events.filter((e) => e.type.startsWith('money.'));
    expect(money.map((e) => [e.type, e.partitionKey])).toEqual([
      ['money.wallet.credited', account.wallet.id], ['money.wallet.debited', account.wallet.id],
    ]);
    expect(money[1].data).toMatchObject({ wallet_id: account.wallet.id, transaction_id: debited.body.transactionId, amount: 300, currency: 'USD' });
    const audits = events.filter((e) => e.type === 'audit.record.created').map((e) => e.data.action);
    expect(audits).toEqual(expect.arrayContaining(['money.wallet.created', 'money.transaction.credited', 'money.transaction.debited']));
    await expectLedgerConsistent(account.tenant.id);
  });

  it('keeps meta and reason, and takes the wallet’s currency when none is sent', async () => {
    const account = await moneyAccount(gateway, owner);
    const credited = await mutate(gateway, account.accessToken, `/wallets/${account.wallet.id}/credit`, { amount: 5, meta: { order: 'A-1' } });
    expect(credited.status).toBe(200);
    const read = await send(gateway, 'GET', `/transactions/${credited.body.transactionId}`, account.accessToken);
    expect(read.body).toMatchObject({ meta: { order: 'A-1' }, reason: '', currency: 'USD' });
    await expectLedgerConsistent(account.tenant.id);
  });

  it.each([
    ['zero', 0], ['negative', -5], ['fractional', 1.5], ['a numeric string', '100'], ['a word', 'ten'], ['null', null],
    ['beyond 2^53', 2 ** 60], ['an object', { value: 1 }],
  ])('answers 400 invalid-amount for %s', async (_name, amount) => {
    const account = await moneyAccount(gateway, owner);
    for (const response of [await credit(gateway, account, amount), await debit(gateway, account, amount)]) {
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject(problem('invalid-amount', 400));
    }
  });

  it('answers 400 validation-error without an Idempotency-Key, a missing amount or another currency', async () => {
    const account = await moneyAccount(gateway, owner);
    const noKey = await send(gateway, 'POST', `/wallets/${account.wallet.id}/credit`, account.accessToken, { amount: 1 });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toMatchObject({ ...problem('validation-error', 400), errors: [{ field: 'Idempotency-Key', code: 'REQUIRED' }] });
    // docs/reference/conventions.md#rule-20: UUID v4 or v7. Any other string (a v3 UUID included) is refused before any money moves.
    for (const key of ['order-17', 'e2bc1114-2734-327b-ad8d-cd4e3cf83276', 'e2bc1114:2734:427b:ad8d:cd4e3cf83276']) {
      const badKey = await credit(gateway, account, 1, key);
      expect(badKey.status).toBe(400);
      expect(badKey.body).toMatchObject({ ...problem('validation-error', 400), errors: [{ field: 'Idempotency-Key', code: 'INVALID_FORMAT' }] });
    }
    const noAmount = await mutate(gateway, account.accessToken, `/wallets/${account.wallet.id}/credit`, { currency: 'USD' });
    expect(noAmount.body).toMatchObject(problem('validation-error', 400));
    const euros = await mutate(gateway, account.accessToken, `/wallets/${account.wallet.id}/credit`, { amount: 1, currency: 'EUR' });
    expect(euros.body).toMatchObject({ ...problem('validation-error', 400), errors: [{ field: 'currency', code: 'CURRENCY_MISMATCH' }] });
    expect(await balanceOf(gateway, account)).toEqual({ available: 0, pending: 0, frozen: 0 });
  });

  it('answers 400 insufficient-funds with available and requested, and changes nothing', async () => {
    const account = await moneyAccount(gateway, owner);
    await credit(gateway, account, 10);
    const refused = await debit(gateway, account, 11);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ ...problem('insufficient-funds', 400), available: 10, requested: 11 });
    expect(await balanceOf(gateway, account)).toEqual({ available: 10, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });

  it('answers 404 for another tenant’s wallet and an unknown one', async () => {
    const [mine, theirs] = await Promise.all([moneyAccount(gateway, owner), moneyAccount(gateway, owner)]);
    await credit(gateway, theirs, 100);
    for (const response of [
      await credit(gateway, mine, 1, undefined, theirs.wallet.id),
      await debit(gateway, mine, 1, undefined, theirs.wallet.id),
      await credit(gateway, mine, 1, undefined, '01ARZ3NDEKTSV4RRFFQ69G5FAV'),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject(problem('not-found', 404));
    }
    expect(await balanceOf(gateway, theirs)).toEqual({ available: 100, pending: 0, frozen: 0 });
  });

  it('answers 403 until the caller’s e-mail is verified', async () => {
    const account = await registerAccount(gateway);
    const wallet = await createWallet(gateway, account.accessToken, { userId: account.user.id, currency: 'USD' });
    expect(wallet.status).toBe(201);
    const refused = await mutate(gateway, account.accessToken, `/wallets/${wallet.body.id}/credit`, { amount: 1 });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ ...problem('forbidden', 403), code: 'email-not-verified' });
    // The check rides on the wallet's lock, yet still comes first when there is no wallet to lock.
    const unknown = await mutate(gateway, account.accessToken, '/wallets/01ARZ3NDEKTSV4RRFFQ69G5FAV/debit', { amount: 1 });
    expect(unknown.status).toBe(403);
    expect(unknown.body).toMatchObject({ code: 'email-not-verified' });
  });

  it('answers 403 without money.write', async () => {
    const account = await moneyAccount(gateway, owner);
    const member = await addMember(gateway, owner, account.tenant.id, 'member');
    const refused = await mutate(gateway, member.token, `/wallets/${account.wallet.id}/credit`, { amount: 1 });
    expect(refused.status).toBe(403);
    expect((await send(gateway, 'POST', `/wallets/${account.wallet.id}/credit`, undefined, { amount: 1 })).status).toBe(401);
  });
});

describe('Idempotency-Key', () => {
  it('answers a repeated key and body with the first answer, once in the ledger', async () => {
    const account = await moneyAccount(gateway, owner);
    const key = newId();
    const first = await credit(gateway, account, 250, key);
    const again = await credit(gateway, account, 250, key);
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual(first.body);
    expect(await balanceOf(gateway, account)).toEqual({ available: 250, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });

  it('answers 409 idempotency-conflict for the same key with another body', async () => {
    const account = await moneyAccount(gateway, owner);
    const key = newId();
    await credit(gateway, account, 250, key);
    const conflict = await credit(gateway, account, 251, key);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject(problem('idempotency-conflict', 409));
    // Keys are per route: the same key on debit is another request.
    expect((await debit(gateway, account, 1, key)).status).toBe(200);
  });

  it('runs concurrent requests with one key once and answers them all alike', async () => {
    const account = await moneyAccount(gateway, owner);
    const key = newId();
    const answers = await Promise.all(Array.from({ length: 10 }, () => credit(gateway, account, 7, key)));
    // The same JSON value (a replay comes from jsonb, whose key order differs from the first answer's).
    for (const answer of answers) expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: answers[0].body });
    expect(await balanceOf(gateway, account)).toEqual({ available: 7, pending: 0, frozen: 0 });
    // The losers' events, written with their answers, rolled back with them: one event, one audit record.
    const events = (await outboxEventsOf(owner, account.tenant.id)).filter((event) => event.data.transaction_id === answers[0].body.transactionId
      || event.data.entityId === answers[0].body.transactionId);
    expect(events.map((event) => event.type).sort()).toEqual(['audit.record.created', 'money.wallet.credited']);
    await expectLedgerConsistent(account.tenant.id);
  });

  it('answers a retry that would now be refused (its first attempt spent the money) with the stored answer', async () => {
    const account = await moneyAccount(gateway, owner);
    expect((await credit(gateway, account, 10)).status).toBe(200);
    const key = newId();
    const first = await debit(gateway, account, 10, key);
    const retry = await debit(gateway, account, 10, key);
    const otherBody = await debit(gateway, account, 9, key);

    expect(first.status).toBe(200);
    expect({ status: retry.status, body: retry.body }).toEqual({ status: 200, body: first.body });
    expect(otherBody.status).toBe(409);
    expect(await balanceOf(gateway, account)).toEqual({ available: 0, pending: 0, frozen: 0 });
    const debited = (await outboxEventsOf(owner, account.tenant.id)).filter((event) => event.type === 'money.wallet.debited');
    expect(debited).toHaveLength(1);
    await expectLedgerConsistent(account.tenant.id);
  });

  it('answers a retry after a crash between commit and response with what was committed', async () => {
    const account = await moneyAccount(gateway, owner);
    const key = newId();
    // The route's own service commits the credit and its answer; the process "dies" before
    // answering (the result is dropped), as a gateway killed after COMMIT would.
    const auth = { userId: account.user.id, tenantId: account.tenant.id, email: account.user.email, roles: ['owner'] };
    await moveMoney(gateway.runtime.money, auth, 'credit', account.wallet.id, { amount: 40, currency: 'USD', reason: 'top-up', meta: {} }, key);
    const stored = await owner.one(sql.type(z.object({ status: z.number(), body: z.record(z.string(), z.unknown()) }))`
      SELECT response_status AS status, response_body AS body FROM idempotency_keys WHERE tenant_id = ${account.tenant.id} AND key = ${key}`);

    const retry = await credit(gateway, account, 40, key);
    expect({ status: retry.status, body: retry.body }).toEqual(stored);
    expect(await balanceOf(gateway, account)).toEqual({ available: 40, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });
});

describe('plan limits', () => {
  /**
   * Puts the tenant on a plan of its own: starter's limits with the given money limits (the catalogue's
   * plans stay untouched).
   */
  async function planWith(tenantId: string, limits: { maxTxAmount: number; maxBalance: number }): Promise<string> {
    const planId = `money-test-${newId().slice(-12)}`;
    await owner.query(sql.unsafe`
      INSERT INTO plans (id, name, price, limits)
      SELECT ${planId}, 'Money test', 0, limits || ${sql.jsonb(limits)} FROM plans WHERE id = 'starter'`);
    await owner.query(sql.unsafe`UPDATE subscriptions SET plan_id = ${planId} WHERE tenant_id = ${tenantId}`);
    return planId;
  }

  it('answers 402 plan-limit-exceeded above maxTxAmount and above maxBalance, with both body shapes', async () => {
    const account = await registerAccount(gateway);
    const planId = await planWith(account.tenant.id, { maxTxAmount: 500, maxBalance: 800 });
    const verified = await moneyAccountOf(account);

    const tooLarge = await credit(gateway, verified, 501);
    expect(tooLarge.status).toBe(402);
    expect(tooLarge.body).toMatchObject({
      ...problem('plan-limit-exceeded', 402),
      limit: { resource: 'maxTxAmount', allowed: 500, current: 501, planId }, maxTxAmount: 500, value: 501, max: 500,
    });
    expect((await credit(gateway, verified, 500)).status).toBe(200);
    expect((await credit(gateway, verified, 300)).status).toBe(200);
    const tooRich = await credit(gateway, verified, 1);
    expect(tooRich.status).toBe(402);
    expect(tooRich.body).toMatchObject({
      limit: { resource: 'maxBalance', allowed: 800, current: 800, planId }, maxBalance: 800, value: 801, max: 800,
    });
    expect((await debit(gateway, verified, 501)).status).toBe(402);
    expect(await balanceOf(gateway, verified)).toEqual({ available: 800, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });

  async function moneyAccountOf(account: Awaited<ReturnType<typeof registerAccount>>): Promise<MoneyAccount> {
    await owner.query(sql.unsafe`UPDATE users SET email_verified = true WHERE id = ${account.user.id}`);
    const wallet = await createWallet(gateway, account.accessToken, { userId: account.user.id, currency: 'USD' });
    return { ...account, wallet: wallet.body };
  }
});

