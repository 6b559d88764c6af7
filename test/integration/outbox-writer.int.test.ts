import { z } from 'zod';
import { enqueueEvent, type EventInput } from '../../services/events/publish';
import { newId } from '../../common/ids';
import { Problem } from '../../common/problems';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * The outbox writer as the gateway uses it: platform_app, inside withTenant's transaction. The row is
 * read back without its published_at: the relay of a running platform may publish it at any moment.
 */

const tenantId = newId();
let app: DatabasePool;
let owner: DatabasePool;

const storedRow = z.object({
  tenantId: z.string(),
  topic: z.string(),
  partitionKey: z.string(),
  type: z.string(),
  source: z.string(),
  data: z.unknown(),
  schemaVersion: z.string(),
  traceId: z.string().nullable(),
  correlationId: z.string().nullable(),
});

const stored = (id: string) => owner.maybeOne(sql.type(storedRow)`
  SELECT tenant_id AS "tenantId", topic, partition_key AS "partitionKey", type, source, data,
         schema_version AS "schemaVersion", trace_id AS "traceId", correlation_id AS "correlationId"
  FROM outbox_events WHERE id = ${id}
`);

const event = (change: Partial<EventInput> = {}): EventInput => ({
  tenantId, type: 'money.wallet.credited', source: 'money', key: 'wallet-1', data: { amount: 100 }, ...change,
});

beforeAll(async () => {
  await migrateSharedDatabase();
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'outbox-writer-test' });
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'outbox-writer-test-owner' });
});

afterAll(async () => {
  await owner?.query(sql.unsafe`DELETE FROM outbox_events WHERE tenant_id = ${tenantId}`);
  await Promise.all([app?.end(), owner?.end()]);
});

describe('enqueueEvent', () => {
  it('writes the event in the caller’s transaction and returns its UUID v7', async () => {
    const id = await withTenant(app, tenantId, (tx) => enqueueEvent(tx, event({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736', correlationId: 'saga-1', schemaVersion: '1.2.0',
    })));

    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await stored(id)).toEqual({
      tenantId, topic: 'platform.money.events', partitionKey: 'wallet-1', type: 'money.wallet.credited', source: 'money',
      data: { amount: 100 }, schemaVersion: '1.2.0', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', correlationId: 'saga-1',
    });
  });

  it('leaves no row when the caller’s transaction rolls back', async () => {
    let id = '';
    await expect(withTenant(app, tenantId, async (tx) => {
      id = await enqueueEvent(tx, event());
      throw new Error('the business change failed');
    })).rejects.toThrow('the business change failed');

    expect(id).not.toBe('');
    expect(await stored(id)).toBeNull();
  });

  it('defaults the schema version to 1.0.0 and the topic to the type’s domain', async () => {
    const id = await withTenant(app, tenantId, (tx) => enqueueEvent(tx, event({ type: 'crm.contact.created', source: 'crm' })));
    expect(await stored(id)).toMatchObject({ topic: 'platform.data.events', schemaVersion: '1.0.0', traceId: null });
  });

  it('uses the topic a module declares', async () => {
    const id = await withTenant(app, tenantId, (tx) => enqueueEvent(tx, event({
      type: 'crm.file.attached', source: 'crm', topic: 'platform.files.events',
    })));
    expect(await stored(id)).toMatchObject({ topic: 'platform.files.events' });
  });

  it('refuses an invalid event with one validation problem naming every field', async () => {
    const attempt = withTenant(app, tenantId, (tx) => enqueueEvent(tx, event({
      type: 'Wallet Credited', schemaVersion: 'v2', topic: 'platform.crm.events', key: '', data: [] as unknown as Record<string, unknown>,
    })));

    const problem = await attempt.catch((error: unknown) => error);
    expect(problem).toBeInstanceOf(Problem);
    expect((problem as Problem).type).toBe('validation-error');
    expect((problem as Problem).extensions.errors?.map((error) => [error.field, error.code])).toEqual([
      ['type', 'invalid-event-type'],
      ['key', 'required'],
      ['schemaVersion', 'invalid-schema-version'],
      ['topic', 'unknown-topic'],
      ['data', 'invalid-data'],
    ]);
  });

  it('refuses data over 1 MB (docs/reference/events.md#rule-9)', async () => {
    const attempt = withTenant(app, tenantId, (tx) => enqueueEvent(tx, event({ data: { blob: 'x'.repeat(1024 * 1024) } })));
    await expect(attempt).rejects.toMatchObject({ type: 'validation-error', extensions: { errors: [{ field: 'data', code: 'payload-too-large' }] } });
  });
});
