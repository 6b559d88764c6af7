import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { closeLedgerPool, expectLedgerConsistent } from '../../helpers/ledger';
import { credit, debit, moneyAccount, send, type MoneyAccount } from '../../helpers/money';

/**
 * Transaction history (docs/reference/money.md#rule-17): set A `GET /transactions?walletId=` with page_size/page_token,
 * set B `GET /wallets/:id/transactions` with limit/cursor; newest first; filters type, status, since,
 * until; pages of 1 to 100 (default 20); `GET /transactions/:id`. Another tenant's wallet is 404.
 */
jest.setTimeout(60_000);

let gateway: TestGateway;
let owner: DatabasePool;
let account: MoneyAccount;
/** Transaction ids, oldest first: 25 credits of 1, then 5 debits of 1. */
const ids: string[] = [];

interface Row { id: string; type: string; status: string; createdAt: string }
interface PageA { data: Row[]; next_page_token?: string }
interface PageB { data: Row[]; meta: { cursor: string | null; hasMore: boolean } }

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'money-history-test' });
  account = await moneyAccount(gateway, owner);
  for (let i = 0; i < 25; i += 1) ids.push((await credit(gateway, account, 1)).body.transactionId);
  for (let i = 0; i < 5; i += 1) ids.push((await debit(gateway, account, 1)).body.transactionId);
});

afterAll(async () => {
  await expectLedgerConsistent(account?.tenant.id);
  await closeLedgerPool();
  await gateway?.close();
  await owner?.end();
});

const newestFirst = () => [...ids].reverse();

describe('set A: GET /transactions?walletId=', () => {
  it('pages with page_size/page_token, newest first, 20 by default', async () => {
    const first = await send<PageA>(gateway, 'GET', `/transactions?walletId=${account.wallet.id}`, account.accessToken);
    expect(first.status).toBe(200);
    expect(first.body.data.map((t) => t.id)).toEqual(newestFirst().slice(0, 20));
    const second = await send<PageA>(gateway, 'GET', `/transactions?walletId=${account.wallet.id}&page_token=${first.body.next_page_token}`, account.accessToken);
    expect(second.body.data.map((t) => t.id)).toEqual(newestFirst().slice(20));
    expect(second.body.next_page_token).toBeUndefined();
  });

  it('filters by type and status', async () => {
    const debits = await send<PageA>(gateway, 'GET', `/transactions?walletId=${account.wallet.id}&type=debit&page_size=100`, account.accessToken);
    expect(debits.body.data.map((t) => t.id)).toEqual(newestFirst().slice(0, 5));
    const held = await send<PageA>(gateway, 'GET', `/transactions?walletId=${account.wallet.id}&status=held`, account.accessToken);
    expect(held.body.data).toEqual([]);
  });

  it('answers 400 without walletId, for page_size above 100, a bad filter or a forged token', async () => {
    for (const query of ['', `?walletId=${account.wallet.id}&page_size=101`, `?walletId=${account.wallet.id}&type=gift`,
      `?walletId=${account.wallet.id}&page_token=bm9wZQ`, `?walletId=${account.wallet.id}&page_size=5&limit=5`]) {
      const response = await send(gateway, 'GET', `/transactions${query}`, account.accessToken);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
    }
  });
});

describe('set B: GET /wallets/:id/transactions', () => {
  it('pages with limit/cursor and answers meta {cursor, hasMore}', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page: { body: PageB } = await send<PageB>(gateway, 'GET',
        `/wallets/${account.wallet.id}/transactions?limit=7${cursor ? `&cursor=${cursor}` : ''}`, account.accessToken);
      seen.push(...page.body.data.map((t) => t.id));
      expect(page.body.meta.hasMore).toBe(page.body.meta.cursor !== null);
      cursor = page.body.meta.cursor;
      pages += 1;
    }
    expect(pages).toBe(5);
    expect(seen).toEqual(newestFirst());
  });

  it('filters by since (inclusive) and until (exclusive)', async () => {
    // Spread the rows over distinct instants, one second apart, oldest first.
    for (const [i, id] of ids.entries()) {
      await owner.query(sql.unsafe`UPDATE money_transactions SET created_at = '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => ${i}) WHERE id = ${id}`);
    }
    const window = await send<PageB>(gateway, 'GET',
      `/wallets/${account.wallet.id}/transactions?since=2026-01-01T00:00:10Z&until=2026-01-01T00:00:13Z`, account.accessToken);
    expect(window.body.data.map((t) => t.id)).toEqual([ids[12], ids[11], ids[10]]);
    expect(window.body.meta).toEqual({ cursor: null, hasMore: false });
  });
});

describe('GET /transactions/:id and isolation', () => {
  it('reads one transaction; another tenant’s wallet and transaction are 404', async () => {
    expect((await send(gateway, 'GET', `/transactions/${ids[0]}`, account.accessToken)).body).toMatchObject({ id: ids[0], type: 'credit' });
    const other = await moneyAccount(gateway, owner);
    for (const path of [`/transactions/${ids[0]}`, `/wallets/${account.wallet.id}/transactions`, `/transactions?walletId=${account.wallet.id}`]) {
      const hidden = await send(gateway, 'GET', path, other.accessToken);
      expect({ path, status: hidden.status }).toEqual({ path, status: 404 });
    }
  });
});
