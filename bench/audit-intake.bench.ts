import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { AuditIntake } from '../services/audit/record-publisher';
import type { AuditDraft } from '../services/audit/writer';
import { newId } from '../common/ids';
import { AuditConsumer } from '../workers/audit/consumer';
import { AuditStore } from '../services/audit/store';
import { verifyTenantChain } from '../services/audit/verify';
import { createAuditDatabase, createTestTopic, quietLogger } from '../test/helpers/audit';
import { openLoop } from './lib/load';
import { allOf, atLeast, atMost, startResults } from './lib/results';

/**
 * Audit intake throughput (issue 7: at least 2 000 records/s sustained from the intake through Kafka
 * into PostgreSQL with the hash chain, lag back to zero within 10 s after the load stops).
 *
 *   npm run bench:audit -- [--rate 2500] [--seconds 10] [--tenants 20] [--batch 250]
 *
 * publishAuditRecords is called with `batch` records every batch/rate seconds for `seconds`, spread
 * over `tenants` tenants; the audit consumer (group settings as in production) stores them in a
 * scratch database from a topic of its own (6 partitions, like the real one). Reported: offered and
 * stored rates during the load, the lag when the load stops and how long it takes to reach zero, and
 * the chain verification rate. Bounded: it gives up 60 s after the load stops.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '2500' }, seconds: { type: 'string', default: '10' },
      tenants: { type: 'string', default: '20' }, batch: { type: 'string', default: '250' },
    },
  });
  const rate = Number(values.rate);
  const seconds = Number(values.seconds);
  const batch = Number(values.batch);
  const tenants = Array.from({ length: Number(values.tenants) }, () => newId());
  const logger = quietLogger();
  const results = startResults('audit-intake', values);

  const [db, topic] = await Promise.all([createAuditDatabase('platform_audit_bench'), createTestTopic('audit-bench', 6)]);
  const consumer = new AuditConsumer({
    kafka: topic.kafka, store: new AuditStore(db.owner), logger, topic: topic.name,
    settings: { groupId: `bench.audit.${newId()}`, chunkSize: 1000, partitionsConcurrently: 3 },
  });
  const intake = new AuditIntake({
    kafka: topic.kafka, bufferDb: db.app, logger, topic: topic.name, settings: { publishTimeoutMs: 5000, kafkaRetryMs: 5000 },
  });
  try {
    await consumer.start();
    let n = 0;
    const draft = (): AuditDraft => {
      n += 1;
      return {
        tenantId: tenants[n % tenants.length], source: 'bench', action: 'money.wallet.credited', entityType: 'wallet',
        entityId: `wallet-${n % 500}`, actorId: newId(), actorIp: '203.0.113.9', actorUserAgent: 'bench/1.0',
        before: { balance: n }, after: { balance: n + 100 }, meta: { amount: 100, currency: 'USD', n }, traceId: newId().replaceAll('-', ''),
      };
    };

    const started = performance.now();
    let published = 0;
    // One batch at a time, as one service's intake publishes: a late batch delays the next, which then catches up.
    await openLoop({ rate: rate / batch, seconds, maxInFlight: 1, whenFull: 'wait' }, async () => {
      await intake.publishAuditRecords(Array.from({ length: batch }, draft));
      published += batch;
    });
    const loadSeconds = (performance.now() - started) / 1000;
    const storedAtStop = consumer.status().stored;

    const stopped = performance.now();
    while (consumer.status().stored < published && performance.now() - stopped < 60_000) await sleep(50);
    const drainSeconds = (performance.now() - stopped) / 1000;
    const stored = consumer.status().stored;
    const totalSeconds = (performance.now() - started) / 1000;

    const verifyStarted = performance.now();
    const verification = await verifyTenantChain(db.app, tenants[0]);
    const verifySeconds = (performance.now() - verifyStarted) / 1000;

    const round = (x: number) => Math.round(x);
    const figures = {
      offered: { records: published, seconds: +loadSeconds.toFixed(2), perSecond: round(published / loadSeconds) },
      storedDuringLoad: { records: storedAtStop, perSecond: round(storedAtStop / loadSeconds) },
      lagAtStop: published - storedAtStop,
      lagToZeroSeconds: stored >= published ? +drainSeconds.toFixed(2) : null,
      endToEnd: { stored, seconds: +totalSeconds.toFixed(2), perSecond: round(stored / totalSeconds) },
      duplicates: consumer.status().duplicates,
      verify: { ok: verification.ok, records: verification.records, perSecond: round(verification.records / verifySeconds) },
    };
    console.log(JSON.stringify(figures, null, 2));
    results.write(figures, [allOf('intake: ≥ 2 000 records/s stored during the load, lag back to zero within 10 s after it (issue 7)', [
      atLeast('', storedAtStop / loadSeconds, 2000, `${round(storedAtStop / loadSeconds)} records/s stored of ${round(published / loadSeconds)} offered`),
      atMost('', stored >= published ? drainSeconds : Number.MAX_VALUE, 10, stored >= published ? `lag ${published - storedAtStop} back to zero in ${drainSeconds.toFixed(1)} s` : `${published - stored} never stored`),
    ])]);
    if (stored < published) process.exitCode = 1;
  } finally {
    await intake.close();
    await consumer.stop();
    await topic.drop();
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
