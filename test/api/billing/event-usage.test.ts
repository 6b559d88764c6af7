import { randomUUID } from 'node:crypto';
import { status, type Client } from '@grpc/grpc-js';
import { newId } from '../../../common/ids';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import { adjustUsage } from '../../../db/queries/billing/usage.queries';
import { withTenant } from '../../../db/tenant';
import { topics } from '../../../services/events/topics';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { setSubscription } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { expectProblem } from '../../helpers/files-api';
import { eventServiceClient, failure, unary } from '../../helpers/grpc';
import { call, type JsonResponse } from '../../helpers/http';
import { bearer, get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { closedPort, ensureCatalogueTopics } from '../../helpers/kafka';
import { installModule } from '../../helpers/modules';

/**
 * eventsPerDay (docs/reference/billing.md#rule-17) through the real gateway, PostgreSQL and Kafka:
 * every event a tenant publishes over REST or gRPC counts once into the day's usage, an idempotent
 * replay and a refused or unsent publish count nothing, and a publish past a non-zero limit is 402
 * plan-limit-exceeded (gRPC RESOURCE_EXHAUSTED). A tenant is brought near its limit by raising the
 * day's counter directly, as the billing usage tests do, instead of publishing a thousand events.
 */

let gateway: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;
let client: Client;

beforeAll(async () => {
  await Promise.all([migrateSharedDatabase(), ensureCatalogueTopics()]);
  [gateway, owner, app] = await Promise.all([
    startTestGateway(),
    createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'event-usage-owner' }),
    createDbPool(appUrl(), { maxPoolSize: 2, name: 'event-usage-app' }),
  ]);
  client = eventServiceClient(gateway);
}, 60_000);

afterAll(async () => {
  client?.close();
  await gateway?.close();
  await owner?.end();
  await app?.end();
});

/** A new tenant with crm installed, on `planId` (registration's plan, starter, when not named). */
async function publisherOn(planId?: string): Promise<RegisteredAccount> {
  const account = await registerAccount(gateway);
  expect((await installModule(gateway, account.accessToken, 'crm')).status).toBe(201);
  if (planId) await setSubscription(gateway, owner, account.tenant.id, { planId });
  return account;
}

const contactCreated = () => ({ type: 'crm.contact.created', data: { id: newId(), firstName: 'Ada' } });

function publish(target: TestGateway, token: string, headers: Record<string, string> = {}, body: unknown = contactCreated()): Promise<JsonResponse> {
  return call(`${target.baseUrl}/v1/events/publish`, {
    method: 'POST', headers: { ...bearer(token), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
}

function grpcEvent() {
  const data = { id: newId(), firstName: 'Ada' };
  return { key: data.id, event: { type: 'crm.contact.created', data: Buffer.from(JSON.stringify(data)) } };
}

const grpcPublish = (token: string) => unary(client, 'Publish', { topic: topics.data.name, ...grpcEvent() }, token);
const grpcBatch = (token: string, size: number) =>
  unary<{ published_count: number }>(client, 'BatchPublish', { topic: topics.data.name, items: Array.from({ length: size }, grpcEvent) }, token);

/** Today's eventsPerDay of the caller's tenant as GET /billing/usage reports it. */
async function eventsToday(account: RegisteredAccount): Promise<{ current: number; limit: number }> {
  const response = await get<{ usage: { eventsPerDay: { current: number; limit: number } } }>(gateway, '/billing/usage', account.accessToken);
  expect(response.status).toBe(200);
  const { current, limit } = response.body.usage.eventsPerDay;
  return { current, limit };
}

/** Raises the tenant's counter of today, as the tenant's own publishes would. */
function countEvents(account: RegisteredAccount, count: number): Promise<void> {
  return withTenant(app, account.tenant.id, (tx) => adjustUsage(tx, 'events_per_day', count));
}

describe('counting published events', () => {
  it('counts each event published over REST and gRPC once, a batch as its size, and an idempotent replay not at all', async () => {
    const account = await publisherOn();
    const before = await eventsToday(account);

    const key = randomUUID();
    const body = contactCreated();
    expect((await publish(gateway, account.accessToken, { 'Idempotency-Key': key }, body)).status).toBe(201);
    expect((await publish(gateway, account.accessToken, { 'Idempotency-Key': key }, body)).status).toBe(200);
    expect((await publish(gateway, account.accessToken)).status).toBe(201);
    await grpcPublish(account.accessToken);
    expect(await grpcBatch(account.accessToken, 3)).toEqual({ published_count: 3 });

    expect(await eventsToday(account)).toEqual({ current: before.current + 6, limit: 10000 });
  });

  it('counts nothing for a refused publish or one the broker did not take', async () => {
    const account = await publisherOn();
    const before = (await eventsToday(account)).current;

    // Kernel namespaces are refused before anything is counted.
    expect((await publish(gateway, account.accessToken, {}, { type: 'auth.user.created', data: {} })).status).toBe(403);
    const down = await startTestGateway({ env: { KAFKA_BROKERS: `127.0.0.1:${await closedPort()}` } });
    try {
      expectProblem(down, await publish(down, account.accessToken), 503, 'events-broker-unavailable');
      expectProblem(down, await publish(down, account.accessToken, { 'Idempotency-Key': randomUUID() }), 503, 'events-broker-unavailable');
    } finally {
      await down.close();
    }

    expect((await eventsToday(account)).current).toBe(before);
  }, 60_000);
});

describe('the eventsPerDay limit', () => {
  it('refuses a free tenant’s publish once the day holds 1000 events, over REST and gRPC, counting nothing more', async () => {
    const account = await publisherOn('free');
    const answered = randomUUID();
    const body = contactCreated();
    expect((await publish(gateway, account.accessToken, { 'Idempotency-Key': answered }, body)).status).toBe(201);
    await countEvents(account, 998 - (await eventsToday(account)).current);

    // 998 used: a batch of two would pass 1000 together, so it is refused whole; one more event still passes.
    const batch = await failure(grpcBatch(account.accessToken, 3));
    expect({ code: batch.code, problem: batch.problem }).toEqual({ code: status.RESOURCE_EXHAUSTED, problem: 'plan-limit-exceeded' });
    expect(await grpcBatch(account.accessToken, 2)).toEqual({ published_count: 2 });
    expect(await eventsToday(account)).toEqual({ current: 1000, limit: 1000 });

    const refused = expectProblem(gateway, await publish(gateway, account.accessToken), 402, 'plan-limit-exceeded');
    expect(refused.limit).toEqual({ resource: 'events_per_day', allowed: 1000, current: 1000, planId: 'free' });
    expectProblem(gateway, await publish(gateway, account.accessToken, { 'Idempotency-Key': randomUUID() }), 402, 'plan-limit-exceeded');
    const grpc = await failure(grpcPublish(account.accessToken));
    expect({ code: grpc.code, problem: grpc.problem }).toEqual({ code: status.RESOURCE_EXHAUSTED, problem: 'plan-limit-exceeded' });
    expect(grpc.details).toContain('events_per_day');

    // A replay publishes nothing, so the limit does not stop it.
    expect((await publish(gateway, account.accessToken, { 'Idempotency-Key': answered }, body)).status).toBe(200);
    expect((await eventsToday(account)).current).toBe(1000);
  });

  it('lets concurrent publishes together reach the limit, never pass it', async () => {
    const account = await publisherOn('free');
    await countEvents(account, 995 - (await eventsToday(account)).current);
    const answers = await Promise.all(Array.from({ length: 10 }, () => publish(gateway, account.accessToken)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(5).fill(201), ...Array(5).fill(402)]);
    expect((await eventsToday(account)).current).toBe(1000);
  });

  it('never refuses an enterprise tenant (limit 0 = unlimited)', async () => {
    const account = await publisherOn('enterprise');
    await countEvents(account, 5_000_000);
    expect((await publish(gateway, account.accessToken)).status).toBe(201);
    await grpcPublish(account.accessToken);
    expect(await grpcBatch(account.accessToken, 2)).toEqual({ published_count: 2 });
    expect(await eventsToday(account)).toEqual({ current: 5_000_004, limit: 0 });
  });
});
