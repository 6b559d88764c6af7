import { setTimeout as sleep } from 'node:timers/promises';
import { newId } from '../../common/ids';
import { platformSearchAttributeKeys } from '../../common/temporal/search-attributes';
import { bearer, post } from '../helpers/identity';
import { fundedWallet, startMoneyFlowsFixture, type MoneyFlowsFixture } from '../helpers/money-flows';

/**
 * Against the real Temporal server (the dev server, whose visibility store answers the UI's
 * queries): the workflows a gateway starts carry the search attributes an operator filters one
 * tenant's work by (common/temporal/search-attributes.ts). A transfer goes through the gateway's
 * route, its client and its interceptors, as in production; the registration before it starts
 * the tenant's subscription workflow and its verification mail from a request that has no tenant
 * in its context yet. Visibility is eventually consistent, so each query is polled.
 */
jest.setTimeout(90_000);

let fixture: MoneyFlowsFixture;

beforeAll(async () => {
  fixture = await startMoneyFlowsFixture('search-attributes');
});

afterAll(() => fixture?.close());

/** How many workflows the query finds, once it finds at least one or the deadline has passed. */
async function countOnceListed(query: string, deadlineMs = 30_000): Promise<number> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const { count } = await fixture.server.client.workflow.count(query);
    if (count > 0 || Date.now() >= deadline) return count;
    await sleep(250);
  }
}

it('finds a tenant\'s transfer by TenantId and BusinessKind, and by either wallet', async () => {
  const { app, gateway, account } = fixture;
  const tenantId = account.tenant.id;
  const [from, to] = [await fundedWallet(app, tenantId, account.user.id, 500), await fundedWallet(app, tenantId, account.user.id, 0)];
  const key = newId();

  const response = await post(gateway, '/transfers', { fromWalletId: from, toWalletId: to, amount: 120, currency: 'USD', reason: 'rent' },
    { ...bearer(account.accessToken), 'idempotency-key': key });
  expect(response.status).toBe(200);

  const transfer = `TenantId = "${tenantId}" AND BusinessKind = "money.transfer"`;
  expect(await countOnceListed(transfer)).toBe(1);
  expect(await countOnceListed(`${transfer} AND WalletId = "${from}"`)).toBe(1);
  expect(await countOnceListed(`${transfer} AND WalletId = "${to}"`)).toBe(1);

  const listed = [];
  for await (const workflow of fixture.server.client.workflow.list({ query: transfer })) listed.push(workflow);
  expect(listed).toHaveLength(1);
  expect(listed[0]).toMatchObject({ workflowId: `money.transfer:${tenantId}:${key}`, type: 'moneyTransfer' });
  // The platform's own among them (the server adds system ones, such as BuildIds).
  const platform = listed[0].typedSearchAttributes.getAll().filter(({ key }) => platformSearchAttributeKeys.some(({ name }) => name === key.name));
  expect(platform.map(({ key: { name }, value }) => [name, value]).sort())
    .toEqual([['BusinessKind', 'money.transfer'], ['TenantId', tenantId], ['WalletId', [from, to]]]);

  // Another tenant's filter does not find it.
  expect((await fixture.server.client.workflow.count(`TenantId = "${newId()}" AND BusinessKind = "money.transfer"`)).count).toBe(0);
});

it('labels what a request without a tenant in its context starts: the new tenant\'s subscription and verification mail', async () => {
  const tenantId = fixture.account.tenant.id;
  expect(await countOnceListed(`TenantId = "${tenantId}" AND BusinessKind = "billing.subscription"`)).toBe(1);
  expect(await countOnceListed(`TenantId = "${tenantId}" AND BusinessKind = "notify.send-email"`)).toBeGreaterThanOrEqual(1);
});
