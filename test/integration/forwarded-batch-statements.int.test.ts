import { z } from 'zod';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { forwardedKnownOf, settleForwarded } from '../../db/queries/events/receipts.queries';
import { withTenant } from '../../db/tenant';
import { rowsIn } from '../../db/tenant-reads';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * The one-statement functions of a forwarding group's batch (migration 0034: events_forwarded_known,
 * events_forwarded_settle), run as platform_app: they enter the tenant themselves, so what they may
 * see and write, that the setting ends with the statement, and that they cannot move another
 * tenant's transaction are checked here. What a Subscribe stream makes of them is
 * consumer-groups.int.test.ts's.
 */

let app: DatabasePool;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  // One connection: every statement runs on the same session, so a setting left behind would show.
  app = await createDbPool(appUrl(), { maxPoolSize: 1, name: 'forwarded-batch-statements-test' });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 1, name: 'forwarded-batch-statements-owner' });
});

afterAll(async () => {
  await app?.end();
  await owner?.end();
});

const GROUP = 'tenant.stream.feed-test';
const tenantSetting = () => app.oneFirst(sql.type(z.object({ tenant: z.string().nullable() }))`SELECT current_setting('app.tenant_id', true) AS tenant`);

/** A dead letter of the event in the group, written by the owner role. */
async function deadLetter(tenantId: string, eventId: string): Promise<void> {
  await owner.query(sql.unsafe`
    INSERT INTO event_dead_letters (id, tenant_id, consumer_group, topic, partition, "offset", event_key, event_id, event_type,
                                    envelope, attempt_count, last_error, expires_at)
    VALUES (${newId()}, ${tenantId}, ${GROUP}, 'platform.test', 0, 7, ${eventId}, ${eventId}, 'feed.item.posted',
            '{}'::jsonb, 3, 'stream gone', now() + interval '1 day')`);
}

const status = (tenantId: string, eventId: string) => owner.oneFirst(sql.type(z.object({ status: z.string() }))`
  SELECT status FROM event_dead_letters WHERE tenant_id = ${tenantId} AND consumer_group = ${GROUP} AND event_id = ${eventId}`);

it('settles receipts and resolves dead letters of the tenant only; known answers per tenant; the setting ends with each statement', async () => {
  const [a, b] = [newId(), newId()];
  const [forwarded, redelivered, other] = [newId(), newId(), newId()];
  await deadLetter(a, redelivered);
  await deadLetter(b, other);

  const resolved = await settleForwarded(rowsIn(app), a, GROUP, [
    { eventId: forwarded, expiresAt: null }, { eventId: redelivered, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
  ], [redelivered, other]);
  expect([...resolved]).toEqual([redelivered]);
  expect(await tenantSetting()).toBeFalsy();
  // Tenant b's dead letter of `other` is untouched, though its id was passed for tenant a.
  expect([await status(a, redelivered), await status(b, other)]).toEqual(['resolved', 'pending']);

  const ofA = await forwardedKnownOf(rowsIn(app), a, GROUP, [forwarded, redelivered, other]);
  expect({ receipts: [...ofA.receipts].sort(), deadLetters: [...ofA.deadLetters] }).toEqual({ receipts: [forwarded, redelivered].sort(), deadLetters: [redelivered] });
  const ofB = await forwardedKnownOf(rowsIn(app), b, GROUP, [forwarded, redelivered, other]);
  expect({ receipts: [...ofB.receipts], deadLetters: [...ofB.deadLetters] }).toEqual({ receipts: [], deadLetters: [other] });
  expect(await tenantSetting()).toBeFalsy();

  // A receipt claimed again stays as it was (another member of the group claimed it meanwhile).
  expect(await settleForwarded(rowsIn(app), a, GROUP, [{ eventId: forwarded, expiresAt: new Date().toISOString() }], [])).toEqual(new Set());
  const expiry = await owner.oneFirst(sql.type(z.object({ expiresAt: z.string().nullable() }))`
    SELECT expires_at AS "expiresAt" FROM event_receipts WHERE tenant_id = ${a} AND consumer_group = ${GROUP} AND event_id = ${forwarded}`);
  expect(expiry).toBeNull();
});

it("is refused inside another tenant's transaction, so it cannot move that transaction's tenant", async () => {
  const [a, b] = [newId(), newId()];
  await expect(withTenant(app, b, (tx) => forwardedKnownOf(rowsIn(tx), a, GROUP, [newId()]))).rejects.toThrow(/another tenant/);
  await expect(withTenant(app, b, (tx) => settleForwarded(rowsIn(tx), a, GROUP, [{ eventId: newId(), expiresAt: null }], []))).rejects.toThrow(/another tenant/);
});
