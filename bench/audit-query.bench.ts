import { parseArgs } from 'node:util';
import { z } from 'zod';
import { listAuditRecords } from '../services/audit/query';
import { readOnlyDsn } from '../api/runtime/connections';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool, sql } from '../db/pool';
import { withTenant } from '../db/tenant';
import { createAuditDatabase } from '../test/helpers/audit';
import { onDatabase } from '../test/helpers/db';
import { apiClient, measure, printPhases, startBenchGateway } from './lib/load';
import { below, startResults } from './lib/results';

/**
 * Audit query by entity (issue 7: under 20 ms p99 with 10 million records stored).
 *
 *   npm run bench:audit-query -- [--rows 10000000] [--entities 200000] [--queries 2000] [--chunk 500000] [--concurrency 4]
 *
 * Seeds `rows` records of one tenant into a scratch database (migrated like production, every
 * query index in place) with generate_series, spread over the last 80 days (so over three or four
 * monthly partitions) and `entities` entities of four types, plus 1000 anonymized users so the
 * masking view does its joins. The hash columns hold placeholders: this measures reads, and the
 * chain is not verified here (bench/audit-intake.bench.ts covers the chained write path).
 * Then it measures the entity-history query as the routes run it (listAuditRecords: the wait for
 * anonymizations, withTenant on the read-only reporting pool, the view, a page of 20), and for
 * comparison the tenant's newest page. Then the same through the API: the real gateway as a child
 * process on the bench database, `GET /v1/audit/entity/:type/:id` one at a time and `concurrency` at
 * once (the records belong to the tenant of an account registered there), and the plan of the
 * entity query (EXPLAIN ANALYZE as platform_app under row-level security). The scratch database is
 * dropped at the end.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '10000000' }, entities: { type: 'string', default: '200000' },
      queries: { type: 'string', default: '2000' }, chunk: { type: 'string', default: '500000' },
      concurrency: { type: 'string', default: '4' },
    },
  });
  const rows = Number(values.rows);
  const entities = Number(values.entities);
  const queries = Number(values.queries);
  const chunk = Number(values.chunk);
  const results = startResults('audit-query', values);

  const db = await createAuditDatabase('platform_audit_query_bench');
  const analyticsDb = await createDbPool(readOnlyDsn(db.appUrl), { maxPoolSize: 2, name: 'bench-analytics' });
  const gateway = await startBenchGateway({
    DATABASE_URL: db.appUrl, DATABASE_OWNER_URL: db.ownerUrl, ANALYTICS_DATABASE_URL: onDatabase(db.appUrl, db.name),
    AUDIT_REQUEST_ENABLED: 'false',
  });
  try {
    const call = apiClient(gateway.baseUrl);
    const account = await call('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    const tenantId = (account.tenant as { id: string }).id;
    const token = String(account.accessToken);
    const seedStarted = performance.now();
    // One connection without the pools' 30 s statement timeout: a chunk insert or the VACUUM of
    // 10 million rows takes longer than that on a busy machine.
    await db.owner.connect(async (owner) => {
      await owner.query(sql.unsafe`SET statement_timeout = 0`);
      await owner.query(sql.unsafe`
        SELECT audit_ensure_partition(m::date)
        FROM generate_series(date_trunc('month', now() - interval '80 days'), now(), interval '1 month') AS m
      `);
      for (let from = 1; from <= rows; from += chunk) {
        const to = Math.min(rows, from + chunk - 1);
        await owner.query(sql.unsafe`
          INSERT INTO audit_records (id, tenant_id, seq, action, entity_type, entity_id, actor_id, actor_ip, actor_user_agent,
                                     after, meta, trace_id, occurred_at, prev_hash, hash)
          SELECT gen_random_uuid(), ${tenantId}, g,
                 (ARRAY['money.wallet.credited', 'crm.contact.updated', 'iam.user.updated', 'files.file.uploaded'])[1 + g % 4],
                 (ARRAY['wallet', 'contact', 'user', 'file'])[1 + g % 4],
                 'e-' || (g % ${entities}), 'u-' || (g % 5000), '203.0.113.' || (g % 250), 'bench/1.0',
                 jsonb_build_object('n', g), jsonb_build_object('source', 'bench'), md5(g::text),
                 now() - interval '80 days' + (interval '80 days' / ${rows}) * g,
                 decode(repeat('00', 32), 'hex'), sha256(int8send(g))
          FROM generate_series(${from}::int8, ${to}::int8) AS g
        `);
        const seconds = (performance.now() - seedStarted) / 1000;
        console.log(`seeded ${to.toLocaleString('en')} / ${rows.toLocaleString('en')} rows (${Math.round(to / seconds).toLocaleString('en')} rows/s)`);
      }
      await owner.query(sql.unsafe`
        INSERT INTO audit_anonymized_users (tenant_id, user_id, masked_until, last_anonymization_id)
        SELECT ${tenantId}, 'u-' || g, now(), gen_random_uuid() FROM generate_series(0, 999) AS g
      `);
      console.log('vacuum analyze ...');
      await owner.query(sql.unsafe`VACUUM ANALYZE audit_records`);
      await owner.query(sql.unsafe`VACUUM ANALYZE audit_anonymized_users`);
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    const deps = { analyticsDb, config: config() };
    const types = ['wallet', 'contact', 'user', 'file'];
    const randomEntity = () => {
      const n = Math.floor(Math.random() * entities);
      return { entityType: types[n % 4], entityId: `e-${n}` };
    };
    // In this process, one query at a time: `queries` of them after 200 unmeasured.
    const inProcess = async (name: string, run: () => Promise<unknown>) => {
      const step = async () => { await run(); };
      await measure('warm-up', 1, 600, Math.min(200, queries), step);
      return measure(name, 1, 600, queries, step);
    };
    const page = { style: 'page' as const, size: 20 };
    const byEntity = await inProcess('listAuditRecords by entity, in process', async () => {
      const result = await listAuditRecords(deps, tenantId, randomEntity(), page);
      if (result.data.length === 0) throw new Error('an entity without records: the seed is wrong');
    });
    const newest = await inProcess('listAuditRecords, the newest page, in process', () => listAuditRecords(deps, tenantId, {}, page));

    const sample = randomEntity();
    const plan = await withTenant(analyticsDb, tenantId, (tx) => tx.anyFirst(sql.type(z.object({ 'QUERY PLAN': z.string() }))`
      EXPLAIN (ANALYZE, BUFFERS)
      SELECT * FROM audit_records_readable
      WHERE tenant_id = ${tenantId} AND entity_type = ${sample.entityType} AND entity_id = ${sample.entityId}
      ORDER BY occurred_at DESC, id DESC LIMIT 21
    `));
    console.log(`plan of the entity query (as platform_app, row-level security on):\n  ${plan.join('\n  ')}`);

    const getEntity = async () => {
      const { entityType, entityId } = randomEntity();
      const response = await fetch(`${gateway.baseUrl}/v1/audit/entity/${entityType}/${entityId}?limit=20`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = await response.json() as { data?: unknown[] };
      if (response.status !== 200 || !body.data?.length) throw new Error(`entity history answered ${response.status}`);
    };
    const concurrency = Number(values.concurrency);
    await measure('warm-up', concurrency, 5, 200, getEntity);
    const api = [
      await measure('GET /v1/audit/entity/:type/:id, one at a time', 1, 60, queries, getEntity),
      await measure(`GET /v1/audit/entity/:type/:id, ${concurrency} at once`, concurrency, 60, queries, getEntity),
    ];
    console.log(`${rows} rows, ${entities} entities (${Math.round(rows / entities)} records each), seeded in ${Math.round(seedSeconds)} s; target: the entity query's p99 < 20 ms`);
    printPhases([byEntity, newest, ...api]);
    // The target names its size: 10 million records stored.
    const atTargetSize = (p99: number) => (rows >= 10_000_000 ? p99 : NaN);
    results.write({ entities, seedSeconds, byEntity, newestPage: newest, api }, [
      below('the entity query at 10 million rows, p99 < 20 ms, in process (issue 7)', atTargetSize(byEntity.p99), 20, `${byEntity.p99.toFixed(1)} ms`),
      below('the entity query at 10 million rows, p99 < 20 ms, through the API one at a time (issue 7)', atTargetSize(api[0].p99), 20,
        `${api[0].p99.toFixed(1)} ms (${concurrency} at once: ${api[1].p99.toFixed(1)} ms)`),
    ]);
  } finally {
    gateway.child.kill('SIGTERM');
    await new Promise((resolve) => (gateway.child.exitCode === null ? gateway.child.once('exit', resolve) : resolve(undefined)));
    await analyticsDb.end();
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
