import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { registerAccount } from '../../helpers/identity';
import { addMember } from '../../helpers/rbac';
import { closeLedgerPool, expectLedgerConsistent } from '../../helpers/ledger';
import { createWallet, moneyAccount, send, type MoneyAccount, type Wallet } from '../../helpers/money';

/**
 * Wallets (docs/reference/money.md, Resources): create, list with filters and pages, read, balance; a
 * wallet or user of another tenant is 404; reading needs money.read, creating money.write.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;
let account: MoneyAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'money-wallets-test' });
  account = await moneyAccount(gateway, owner);
});

afterAll(async () => {
  await expectLedgerConsistent();
  await closeLedgerPool();
  await gateway?.close();
  await owner?.end();
});

describe('POST /wallets', () => {
  it('creates a wallet with zero balances and a ULID id', async () => {
    const created = await createWallet(gateway, account.accessToken, { userId: account.user.id, currency: 'EUR', label: 'savings' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/), tenantId: account.tenant.id, userId: account.user.id,
      currency: 'EUR', label: 'savings', balance: { available: 0, pending: 0, frozen: 0 },
      createdAt: expect.any(String), updatedAt: expect.any(String),
    });
  });

  it('answers 409 for a second wallet of the same user, currency and label', async () => {
    const body = { userId: account.user.id, currency: 'GBP', label: 'x' };
    expect((await createWallet(gateway, account.accessToken, body)).status).toBe(201);
    const again = await createWallet(gateway, account.accessToken, body);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: gateway.problemType('conflict') });
  });

  it('replays the creation for a repeated Idempotency-Key; a key that is not a UUID v4 or v7 is 400', async () => {
    const body = { userId: account.user.id, currency: 'CHF', label: 'idem' };
    const key = newId();
    const first = await createWallet(gateway, account.accessToken, body, { 'idempotency-key': key });
    const second = await createWallet(gateway, account.accessToken, body, { 'idempotency-key': key });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    const notUuid = await createWallet(gateway, account.accessToken, { ...body, label: 'other' }, { 'idempotency-key': 'wallet-create-1' });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body).toMatchObject({ type: gateway.problemType('validation-error'), errors: [{ field: 'Idempotency-Key', code: 'INVALID_FORMAT' }] });
  });

  it('answers 404 for a user who is not a member of the tenant, and 400 for bad fields', async () => {
    const stranger = await registerAccount(gateway);
    const foreign = await createWallet(gateway, account.accessToken, { userId: stranger.user.id, currency: 'USD' });
    expect(foreign.status).toBe(404);
    const bad = await createWallet(gateway, account.accessToken, { userId: 'nope', currency: 'usd', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: gateway.problemType('validation-error') });
    expect((bad.body as unknown as { errors: { field: string }[] }).errors.map((e) => e.field).sort()).toEqual(['currency', 'extra', 'userId']);
  });

  it('needs a token and the money.write permission', async () => {
    expect((await createWallet(gateway, '', { userId: account.user.id, currency: 'USD' })).status).toBe(401);
    const { userId, token } = await addMember(gateway, owner, account.tenant.id, 'member');
    const refused = await createWallet(gateway, token, { userId, currency: 'USD' });
    expect(refused.status).toBe(403);
    expect((await send(gateway, 'GET', '/wallets', token)).status).toBe(403);
  });
});

describe('GET /wallets, /wallets/:id, /wallets/:id/balance', () => {
  it('lists the tenant’s wallets with filters and pages', async () => {
    const tenant = await moneyAccount(gateway, owner);
    for (const currency of ['EUR', 'GBP', 'JPY']) {
      expect((await createWallet(gateway, tenant.accessToken, { userId: tenant.user.id, currency })).status).toBe(201);
    }
    const all = await send<{ data: Wallet[] }>(gateway, 'GET', '/wallets', tenant.accessToken);
    expect(all.status).toBe(200);
    expect(all.body.data.map((w) => w.currency)).toEqual(['USD', 'EUR', 'GBP', 'JPY']);

    const eur = await send<{ data: Wallet[] }>(gateway, 'GET', '/wallets?currency=EUR', tenant.accessToken);
    expect(eur.body.data.map((w) => w.currency)).toEqual(['EUR']);
    const byUser = await send<{ data: Wallet[] }>(gateway, 'GET', `/wallets?userId=${account.user.id}`, tenant.accessToken);
    expect(byUser.body.data).toEqual([]);

    const first = await send<{ data: Wallet[]; next_page_token: string }>(gateway, 'GET', '/wallets?page_size=3', tenant.accessToken);
    expect(first.body.data).toHaveLength(3);
    const second = await send<{ data: Wallet[]; next_page_token?: string }>(
      gateway, 'GET', `/wallets?page_size=3&page_token=${first.body.next_page_token}`, tenant.accessToken);
    expect(second.body.data.map((w) => w.currency)).toEqual(['JPY']);
    expect(second.body.next_page_token).toBeUndefined();
    expect((await send(gateway, 'GET', '/wallets?page_size=101', tenant.accessToken)).status).toBe(400);
  });

  it('reads a wallet and its balance; another tenant’s wallet is 404', async () => {
    const read = await send<Wallet>(gateway, 'GET', `/wallets/${account.wallet.id}`, account.accessToken);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(account.wallet);
    const balance = await send(gateway, 'GET', `/wallets/${account.wallet.id}/balance`, account.accessToken);
    expect(balance.body).toEqual({ available: 0, pending: 0, frozen: 0 });

    const other = await moneyAccount(gateway, owner);
    for (const path of [`/wallets/${account.wallet.id}`, `/wallets/${account.wallet.id}/balance`]) {
      const hidden = await send(gateway, 'GET', path, other.accessToken);
      expect(hidden.status).toBe(404);
      expect(hidden.body).toMatchObject({ type: gateway.problemType('not-found') });
    }
    expect((await send(gateway, 'GET', '/wallets/not-a-ulid', account.accessToken)).status).toBe(400);
  });
});

