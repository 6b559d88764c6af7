import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newId } from '../common/ids';
import { AuditConsumer } from '../workers/audit/consumer';
import { AuditStore } from '../services/audit/store';
import { verifyTenantChain } from '../services/audit/verify';
import { createAuditDatabase, createTestTopic, quietLogger } from '../test/helpers/audit';
import { onDatabase } from '../test/helpers/db';
import { apiClient, openLoop, percentile, startBenchGateway } from './lib/load';
import { allOf, atLeast, atMost, startResults } from './lib/results';

/**
 * Audit intake through the REST API (issue 7: at least 2 000 records/s sustained from the API
 * through Kafka into PostgreSQL with the hash chain; the lag back to zero within 10 s after the
 * load stops).
 *
 *   npm run bench:audit-api -- [--rate 2500] [--seconds 20] [--batch 250] [--tenants 10] [--inflight 16]
 *
 * The real gateway runs as a child process on a scratch database with a Kafka topic of its own
 * (6 partitions, like platform.audit.events); the audit consumer (production settings: chunks of
 * 1000, 3 partitions at once) runs in this process and stores into the scratch database. `tenants`
 * accounts are registered; then `POST /v1/audit/records/batch` with `batch` records is sent at a
 * fixed schedule (rate/batch requests per second, at most `inflight` outstanding), for `seconds`.
 * Reported: offered and accepted (202) rates and request latency, records stored during the load,
 * the lag when the load stops and the time until the last record is stored, then a chain check.
 * The gateway's own audit.api.called records are switched off (AUDIT_REQUEST_ENABLED=false), so
 * exactly the bench's records are counted.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '2500' }, seconds: { type: 'string', default: '20' },
      batch: { type: 'string', default: '250' }, tenants: { type: 'string', default: '10' },
      inflight: { type: 'string', default: '16' },
    },
  });
  const [rate, seconds, batch, inflight] = [Number(values.rate), Number(values.seconds), Number(values.batch), Number(values.inflight)];
  const logger = quietLogger();
  const results = startResults('audit-api-intake', values);
  const [db, topic] = await Promise.all([createAuditDatabase('platform_audit_api_bench'), createTestTopic('audit-api-bench', 6)]);
  const gateway = await startBenchGateway({
    DATABASE_URL: db.appUrl, DATABASE_OWNER_URL: db.ownerUrl, ANALYTICS_DATABASE_URL: onDatabase(db.appUrl, db.name),
    AUDIT_INTAKE_TOPIC: topic.name, AUDIT_REQUEST_ENABLED: 'false',
  });
  const consumer = new AuditConsumer({
    kafka: topic.kafka, store: new AuditStore(db.owner), logger, topic: topic.name,
    settings: { groupId: `bench.audit-api.${newId()}`, chunkSize: 1000, partitionsConcurrently: 3 },
  });
  try {
    const call = apiClient(gateway.baseUrl);
    const accounts: { token: string; tenantId: string }[] = [];
    for (let i = 0; i < Number(values.tenants); i += 1) {
      const account = await call('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
      accounts.push({ token: String(account.accessToken), tenantId: (account.tenant as { id: string }).id });
    }
    await consumer.start();
    console.error(`gateway ready, ${accounts.length} tenant(s) registered; sending ${rate} records/s in batches of ${batch} for ${seconds} s`);

    let n = 0;
    const body = () => JSON.stringify({
      records: Array.from({ length: batch }, () => {
        n += 1;
        return {
          action: 'money.wallet.credited', entityType: 'wallet', entityId: `wallet-${n % 500}`,
          before: { balance: n }, after: { balance: n + 100 }, meta: { amount: 100, currency: 'USD', n },
        };
      }),
    });
    const latencies: number[] = [];
    let accepted = 0;
    let failed = 0;
    const send = async (request: number) => {
      const t0 = performance.now();
      const response = await fetch(`${gateway.baseUrl}/v1/audit/records/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accounts[request % accounts.length].token}` },
        body: body(),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (response.status === 202) accepted += batch;
      else failed += 1;
    };

    const started = performance.now();
    // At most `inflight` requests outstanding: one past the bound waits for an answer, and the schedule catches up after.
    const { sent } = await openLoop({ rate: rate / batch, seconds, maxInFlight: inflight, whenFull: 'wait' }, send);
    const offered = sent * batch;
    const loadSeconds = (performance.now() - started) / 1000;
    const storedAtStop = consumer.status().stored;

    const stopped = performance.now();
    while (consumer.status().stored < accepted && performance.now() - stopped < 60_000) await sleep(20);
    const drainSeconds = (performance.now() - stopped) / 1000;
    const stored = consumer.status().stored;
    const totalSeconds = (performance.now() - started) / 1000;
    const verification = await verifyTenantChain(db.app, accounts[0].tenantId);

    latencies.sort((a, b) => a - b);
    const round = (x: number) => Math.round(x);
    const figures = {
      settings: { rate, seconds, batch, tenants: accounts.length, inflight },
      offered: { records: offered, perSecond: round(offered / loadSeconds) },
      accepted: { records: accepted, perSecond: round(accepted / loadSeconds), failedRequests: failed },
      requestMs: { p50: +percentile(latencies, 50).toFixed(1), p99: +percentile(latencies, 99).toFixed(1) },
      storedDuringLoad: { records: storedAtStop, perSecond: round(storedAtStop / loadSeconds) },
      lagAtStop: accepted - storedAtStop,
      lastRecordStoredAfterStopSeconds: stored >= accepted ? +drainSeconds.toFixed(2) : null,
      endToEnd: { stored, seconds: +totalSeconds.toFixed(2), perSecond: round(stored / totalSeconds) },
      verify: { ok: verification.ok, records: verification.records },
    };
    console.log(JSON.stringify(figures, null, 2));
    const sustained = storedAtStop / loadSeconds >= 2000 && stored >= accepted && drainSeconds <= 10 && failed === 0;
    results.write(figures, [allOf('intake through the API: ≥ 2 000 records/s stored during the load, lag back to zero within 10 s after it (issue 7)', [
      atLeast('', failed === 0 ? storedAtStop / loadSeconds : 0, 2000,
        `${round(storedAtStop / loadSeconds)} records/s stored of ${round(offered / loadSeconds)} offered${failed === 0 ? '' : `, ${failed} requests failed`}`),
      atMost('', stored >= accepted ? drainSeconds : Number.MAX_VALUE, 10,
        stored >= accepted ? `lag ${accepted - storedAtStop} back to zero in ${drainSeconds.toFixed(1)} s` : `${accepted - stored} never stored`),
    ])]);
    console.log(`target (>= 2000 records/s stored during the load, lag back to zero within 10 s): ${sustained ? 'OK' : 'MISSED'}`);
    if (!sustained) process.exitCode = 1;
  } finally {
    const exited = new Promise((resolve) => (gateway.child.exitCode === null ? gateway.child.once('exit', resolve) : resolve(undefined)));
    gateway.child.kill('SIGTERM');
    await exited;
    await consumer.stop();
    await topic.drop();
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
