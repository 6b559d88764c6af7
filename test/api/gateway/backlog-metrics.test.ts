import { z } from 'zod';
import { newId } from '../../../common/ids';
import { createObjectStore } from '../../../common/object-store';
import { migrate } from '../../../db/migrate';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { insertBufferedAuditEvents } from '../../../db/queries/audit/audit-fallback.queries';
import { kafkaGroupId } from '../../../services/events/consumers/group-names';
import { enqueueEvent } from '../../../services/events/publish';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { createScratchDatabase, type ScratchDatabase } from '../../helpers/db';
import { seedDeadLetter } from '../../helpers/dead-letters';
import { setStatus } from '../../helpers/files';
import { stageFile } from '../../helpers/files-scan';
import { call, waitFor } from '../../helpers/http';

/**
 * The backlog gauges of the gateway's /metrics (api/metrics/backlog-metrics.ts, migration 0037)
 * through a real gateway. Its database is a scratch one: on the shared database the running relay
 * publishes an outbox row within milliseconds and the audit consumer replays the fallback buffer, so
 * neither backlog could be held still there; here nothing drains them and every value is exact.
 * Readings are not cached (METRICS_BACKLOG_CACHE_MS=0), so each scrape reads the database once.
 */
jest.setTimeout(90_000);

const TIMEOUT_MS = 500;

let scratch: ScratchDatabase;
let owner: DatabasePool;
let app: DatabasePool;
let gateway: TestGateway;

beforeAll(async () => {
  scratch = await createScratchDatabase('platform_backlog_metrics');
  await migrate({ databaseUrl: scratch.ownerUrl, write: () => undefined });
  owner = await createDbPool(scratch.ownerUrl, { maxPoolSize: 3, name: 'backlog-metrics-owner' });
  app = await createDbPool(scratch.appUrl, { maxPoolSize: 2, name: 'backlog-metrics-app' });
  gateway = await startTestGateway({
    env: {
      DATABASE_URL: scratch.appUrl, ANALYTICS_DATABASE_URL: scratch.appUrl, DATABASE_OWNER_URL: scratch.ownerUrl,
      METRICS_BACKLOG_CACHE_MS: '0', METRICS_BACKLOG_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([owner?.end(), app?.end()]);
  await scratch?.drop();
});

const scrape = async (): Promise<string> => (await call<string>(`${gateway.baseUrl}/metrics`)).body;

/** The value of one sample (`name` or `name{labels}`), undefined when the scrape has no such line. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Moves a row's waiting-since column back, so an age can be told from the time the test took. */
async function backdate(table: 'outbox_events' | 'files' | 'audit_fallback_buffer', column: string, id: string, seconds: number): Promise<void> {
  await owner.query(sql.unsafe`
    UPDATE ${sql.identifier([table])} SET ${sql.identifier([column])} = now() - make_interval(secs => ${seconds}) WHERE id = ${id}
  `);
}

async function seedTenant(): Promise<string> {
  const tenantId = newId();
  await owner.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Backlog metrics test')`);
  return tenantId;
}

describe('backlog gauges on /metrics', () => {
  it('are zero on an empty database, and every gauge has a line', async () => {
    const text = await scrape();
    for (const series of [
      'outbox_pending_events', 'outbox_oldest_pending_age_seconds', 'files_pending_scan', 'files_oldest_pending_scan_age_seconds',
      'audit_fallback_buffered_records', 'audit_fallback_oldest_buffered_age_seconds',
    ]) expect([series, sample(text, series)]).toEqual([series, 0]);
    expect(text).not.toMatch(/^event_dead_letters_pending\{/m);
    expect(sample(text, 'backlog_gauges_last_read_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('count what waits across tenants and age the oldest; dead letters by platform group, tenants\' subscriptions summed', async () => {
    const [first, second] = [await seedTenant(), await seedTenant()];

    // Outbox: one row per tenant, the older two minutes old.
    const events = await owner.transaction(async (tx) => [
      await enqueueEvent(tx, { tenantId: first, type: 'crm.contact.created', source: 'crm', key: 'c-1', data: { n: 1 } }),
      await enqueueEvent(tx, { tenantId: second, type: 'crm.contact.created', source: 'crm', key: 'c-2', data: { n: 2 } }),
    ]);
    await backdate('outbox_events', 'occurred_at', events[0], 120);

    // Files: two waiting for their scan (one three minutes old), one rejected (no longer waiting).
    const store = createObjectStore(gateway.config.s3);
    const staged = [
      await stageFile(owner, store, first, { mimeType: 'text/plain', sizeBytes: 10 }),
      await stageFile(owner, store, second, { mimeType: 'text/plain', sizeBytes: 10 }),
      await stageFile(owner, store, second, { mimeType: 'text/plain', sizeBytes: 10 }),
    ];
    await backdate('files', 'created_at', staged[0].fileId, 180);
    await setStatus(owner, staged[2].fileId, 'rejected');

    // Audit fallback buffer: written as the intake writes it (platform_app may only insert), one a minute old.
    const buffered = [newId(), newId()];
    await insertBufferedAuditEvents(app, buffered.map((id, i) => ({
      key: `entity-${i}`,
      envelope: {
        id, type: 'audit.record.created', source: 'audit-api', tenantId: i === 0 ? first : second, data: {},
        schemaVersion: '1.0.0', timestamp: new Date().toISOString(), traceId: null,
      },
    })));
    await backdate('audit_fallback_buffer', 'buffered_at', buffered[0], 60);

    // Dead letters: two pending of one platform group (two tenants), one of another, one resolved;
    // two tenants' subscriptions, each under its tenant's Kafka group id.
    await seedDeadLetter(owner, first, { consumerGroup: 'crm.contacts-sync' });
    await seedDeadLetter(owner, second, { consumerGroup: 'crm.contacts-sync' });
    await seedDeadLetter(owner, first, { consumerGroup: 'notify.welcome-mail' });
    await seedDeadLetter(owner, second, { consumerGroup: 'notify.welcome-mail', status: 'resolved' });
    await seedDeadLetter(owner, first, { consumerGroup: kafkaGroupId('crm.contacts-sync', first) });
    await seedDeadLetter(owner, second, { consumerGroup: kafkaGroupId('crm.mirror', second) });

    const text = await scrape();
    expect(sample(text, 'outbox_pending_events')).toBe(2);
    expect(sample(text, 'outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(120);
    expect(sample(text, 'outbox_oldest_pending_age_seconds')).toBeLessThan(180);
    expect(sample(text, 'files_pending_scan')).toBe(2);
    expect(sample(text, 'files_oldest_pending_scan_age_seconds')).toBeGreaterThanOrEqual(180);
    expect(sample(text, 'audit_fallback_buffered_records')).toBe(2);
    expect(sample(text, 'audit_fallback_oldest_buffered_age_seconds')).toBeGreaterThanOrEqual(60);
    expect(text.split('\n').filter((line) => line.startsWith('event_dead_letters_pending{')).sort()).toEqual([
      'event_dead_letters_pending{group="crm.contacts-sync"} 2',
      'event_dead_letters_pending{group="notify.welcome-mail"} 1',
      'event_dead_letters_pending{group="tenant-subscriptions"} 2',
    ]);
    // Aggregates only: no tenant is named on /metrics.
    expect(text).not.toContain(first);
    expect(text).not.toContain(second);

    // platform_app reads none of it directly: row-level security hides the outbox, the buffer is insert-only.
    expect(await app.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM outbox_events`)).toBe(0);
    await expect(app.query(sql.unsafe`SELECT count(*) FROM audit_fallback_buffer`)).rejects.toThrow(/permission denied/);

    // Published, the outbox rows leave the gauges at the next scrape.
    await owner.query(sql.unsafe`UPDATE outbox_events SET published_at = now() WHERE id = ANY(${sql.array(events, 'uuid')})`);
    const after = await scrape();
    expect(sample(after, 'outbox_pending_events')).toBe(0);
    expect(sample(after, 'outbox_oldest_pending_age_seconds')).toBe(0);
  });

  it('a table locked past the timeout costs a scrape the timeout: the gauges keep their values and the read is cancelled', async () => {
    const before = await scrape();
    const readAt = sample(before, 'backlog_gauges_last_read_timestamp_seconds');
    const pending = sample(before, 'files_pending_scan');

    await owner.transaction(async (tx) => {
      await tx.query(sql.unsafe`LOCK TABLE files IN ACCESS EXCLUSIVE MODE`);
      const started = Date.now();
      const response = await call<string>(`${gateway.baseUrl}/metrics`);
      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2000);
      // The gateway's other metrics are served; the backlog gauges answer their last reading.
      expect(response.body).toMatch(/^http_requests_total\{/m);
      expect(sample(response.body, 'files_pending_scan')).toBe(pending);
      expect(sample(response.body, 'backlog_gauges_last_read_timestamp_seconds')).toBe(readAt);
      // PostgreSQL cancelled the reading (statement_timeout) while the lock is still held.
      await waitFor('the blocked reading to be cancelled', async () => (await tx.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%operations_backlogs()%' AND state = 'active'
      `)) === 0, 5000, 50);
    });

    // The lock gone, readings succeed again (the cancelled one may still be settling at the first scrape).
    await waitFor('a good reading after the lock', async () => sample(await scrape(), 'backlog_gauges_last_read_timestamp_seconds')! > readAt!, 5000, 50);
  });
});
