import { z } from 'zod';
import { newId } from '../../../common/ids';
import { sql } from '../../../db/pool';
import { topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call, type JsonResponse } from '../../helpers/http';
import { bearer, registerAccount } from '../../helpers/identity';
import { consumeTenantEvents, ensureCatalogueTopics } from '../../helpers/kafka';
import { expectLedgerConsistent } from '../../helpers/ledger';
import { balanceOf, credit, moneyAccount, mutate } from '../../helpers/money';
import { fundedWallet, startMoneyFlowsFixture, walletOf, type MoneyFlowsFixture } from '../../helpers/money-flows';
import { installModule } from '../../helpers/modules';

/**
 * The same Idempotency-Key sent to gateway A and gateway B at the same moment (same body) has one
 * effect and one answer: the key lives in PostgreSQL (services/idempotency/idempotent.ts) and, for
 * workflow-backed operations, names the workflow (money.transfer:<tenant>:<key>), not in a gateway.
 * Checked for a credit, a transfer and an event publish (the idempotent routes are the money
 * mutations and POST /events/publish; record creation takes no key).
 */
jest.setTimeout(90_000);

let fixture: MoneyFlowsFixture;
/** The fixture's gateway is A; B serves the same money task queue. */
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  await ensureCatalogueTopics();
  fixture = await startMoneyFlowsFixture('replicas-idempotency');
  a = fixture.gateway;
  b = await startTestGateway({ env: { MONEY_TASK_QUEUE: fixture.taskQueue }, waitUntilReady: true });
});

afterAll(async () => {
  await b?.close();
  await fixture?.close();
});

const rowsUnder = (tenantId: string, key: string) => fixture.owner.oneFirst(sql.type(z.object({ count: z.number() }))`
  SELECT count(*)::int AS count FROM money_transactions WHERE tenant_id = ${tenantId} AND idempotency_key = ${key}
`);

/** Both answers, told apart only by status when the route answers a replay with another one. */
const answersOf = (answers: JsonResponse[]) => answers.map(({ status, body }) => ({ status, body }));

describe('the same Idempotency-Key on gateways A and B at once', () => {
  it('a credit: one transaction, the balance moved once, the same answer from both', async () => {
    const account = await moneyAccount(a, fixture.owner);
    const key = newId();
    const answers = await Promise.all([credit(a, account, 250, key), credit(b, account, 250, key)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers[1].body).toEqual(answers[0].body);
    expect(answers[0].body).toMatchObject({ type: 'credit', status: 'completed', amount: 250 });
    expect(await rowsUnder(account.tenant.id, key)).toBe(1);
    expect(await balanceOf(b, account)).toEqual({ available: 250, pending: 0, frozen: 0 });
    await expectLedgerConsistent(account.tenant.id);
  });

  it('a transfer: one outgoing transaction, both wallets moved once, the same answer from both', async () => {
    const { account } = fixture;
    const tenantId = account.tenant.id;
    const [from, to] = [await fundedWallet(fixture.app, tenantId, account.user.id, 1000), await fundedWallet(fixture.app, tenantId, account.user.id, 0)];
    const key = newId();
    const body = { fromWalletId: from, toWalletId: to, amount: 300, currency: 'USD', reason: 'replicas' };
    const answers = await Promise.all([mutate(a, account.accessToken, '/transfers', body, key), mutate(b, account.accessToken, '/transfers', body, key)]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers[1].body).toEqual(answers[0].body);
    expect(answers[0].body).toMatchObject({ type: 'transfer', status: 'completed', amount: 300, walletId: from, idempotencyKey: key });
    const outgoing = await fixture.owner.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int AS count FROM money_transactions WHERE tenant_id = ${tenantId} AND wallet_id = ${from} AND type = 'transfer'
    `);
    expect(outgoing).toBe(1);
    expect((await walletOf(fixture.app, tenantId, from)).available).toBe(700);
    expect((await walletOf(fixture.app, tenantId, to)).available).toBe(300);
    await expectLedgerConsistent(tenantId);
  });

  it('an event publish: one event in Kafka, answered 201 by one gateway and replayed with the same body (200) by the other', async () => {
    const publisher = await registerAccount(a);
    expect((await installModule(a, publisher.accessToken, 'crm')).status).toBe(201);
    const publish = (gateway: TestGateway, body: unknown, key?: string) => call(`${gateway.baseUrl}/v1/events/publish`, {
      method: 'POST', body: JSON.stringify(body),
      headers: { ...bearer(publisher.accessToken), 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    });
    const key = newId();
    const event = { type: 'crm.contact.created', data: { id: newId(), firstName: 'Ada' } };
    const answers = answersOf(await Promise.all([publish(a, event, key), publish(b, event, key)]));
    // docs/reference/events.md#rule-11: the key seen again answers 200 with the original body.
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 201]);
    expect(answers[1].body).toEqual(answers[0].body);

    // A later event on the same entity (same partition) marks where reading may stop.
    const marker = await publish(a, { type: 'crm.contact.updated', data: { id: event.data.id, lastName: 'Byron' } });
    expect(marker.status).toBe(201);
    const events = await consumeTenantEvents({
      tenantId: publisher.tenant.id, topics: [topics.data.name], until: (seen) => seen.some((e) => e.envelope.id === marker.body.eventId),
    });
    expect(events.filter((e) => e.envelope.data.id === event.data.id).map((e) => e.envelope.id)).toEqual([answers[0].body.eventId, marker.body.eventId]);
  });
});
