import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { z } from 'zod';
import { config } from '../../common/config';
import { enqueueEvent, type EventInput } from '../../services/events/publish';
import { topics } from '../../services/events/topics';
import { newId } from '../../common/ids';
import { createKafka } from '../../common/kafka';
import { repoRoot } from '../../common/paths';
import { migrate } from '../../db/migrate';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { OutboxRelay, type RelayDeps } from '../../workers/outbox/relay';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/db';
import { consumeTenantEvents, ensureCatalogueTopics, type ReceivedEvent } from '../helpers/kafka';
import { JsonLog } from '../helpers/replica-processes';

/**
 * The relay against real PostgreSQL and Kafka. It runs on a scratch database of its own: the leader
 * lock is one per database, and a relay some engineer runs on the shared database must not take
 * this test's rows (or hold the lock). Kafka is shared, so every test reads only its own tenant.
 */

const LEADER = 'relay is the leader; publishing';
const STANDBY = 'another relay is the leader; standing by';
const PUBLISHED = 'published batch';
const KAFKA_REFUSED = 'kafka did not acknowledge the batch; rows kept, retrying after backoff';
const STOPPED = 'relay stopped';
const SESSION_LOST = 'relay lost its database session; rejoining the election';
const TIDIED = 'deleted old published outbox rows';

let scratch: ScratchDatabase;
let db: DatabasePool;

beforeAll(async () => {
  scratch = await createScratchDatabase('platform_outbox_test');
  await migrate({ databaseUrl: scratch.ownerUrl, write: () => undefined });
  db = await createDbPool(scratch.ownerUrl, { maxPoolSize: 4, name: 'outbox-relay-test' });
  await ensureCatalogueTopics();
});

afterAll(async () => {
  await db?.end();
  await scratch?.drop();
});

/** Writes events in one transaction (the owner's: this test is about the relay, not about RLS). */
function write(events: EventInput[]): Promise<string[]> {
  return db.transaction(async (tx) => {
    const ids: string[] = [];
    for (const event of events) ids.push(await enqueueEvent(tx, event));
    return ids;
  });
}

/** `count` contact events over seven keys, numbered from `from` in data.n. */
const contactEventsOf = (tenantId: string, count: number, from = 0): EventInput[] => Array.from({ length: count }, (_, i) => ({
  tenantId, type: 'crm.contact.updated', source: 'crm', key: `contact-${(from + i) % 7}`, data: { n: from + i },
}));

const seqOf = (id: string) => db.oneFirst(sql.type(z.object({ seq: z.number() }))`SELECT seq FROM outbox_events WHERE id = ${id}`);
const pendingOf = (tenantId: string) => db.oneFirst(sql.type(z.object({ n: z.number() }))`
  SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = ${tenantId} AND published_at IS NULL
`);

const relaySettings = {
  batchSize: 50, idlePollMs: 100, lingerMs: 10, backoffInitialMs: 50, backoffMaxMs: 200, statusIntervalMs: 60_000, retentionHours: 168,
};

/** A relay inside the test process, logging into a JsonLog. */
async function startRelay(brokers = config().kafka.brokers, settings: Partial<RelayDeps['settings']> = {}) {
  const log = new JsonLog();
  const logger = pino({ level: 'info' }, new Writable({
    write(chunk: Buffer, _encoding, done) {
      log.feed(chunk.toString());
      done();
    },
  }));
  const pool = await createDbPool(scratch.ownerUrl, { maxPoolSize: 1, name: 'outbox-relay-under-test' });
  const deps: RelayDeps = {
    pool, listenUrl: scratch.ownerUrl, kafka: createKafka({ ...config().kafka, brokers, clientId: 'outbox-relay-test' }, logger), logger,
    settings: { ...relaySettings, ...settings },
  };
  const relay = new OutboxRelay(deps);
  const running = relay.run();
  let stopped: Promise<void> | undefined;
  return {
    relay,
    log,
    stop: () => {
      stopped ??= (async () => {
        relay.stop();
        await running;
        await pool.end();
      })();
      return stopped;
    },
  };
}

const ids = (events: readonly ReceivedEvent[]) => new Set(events.map((event) => event.envelope.id));
const hasAll = (wanted: readonly string[]) => (events: readonly ReceivedEvent[]) => {
  const seen = ids(events);
  return wanted.every((id) => seen.has(id));
};

describe('relay', () => {
  let running: Awaited<ReturnType<typeof startRelay>>;
  beforeAll(async () => {
    running = await startRelay();
    await running.log.waitForMessage(LEADER);
  });
  afterAll(() => running?.stop());

  it('publishes committed rows with the exact envelope, key and headers, and never a rolled-back row', async () => {
    const tenantId = newId();
    const contactId = newId();
    const walletId = newId();
    let rolledBack = '';
    await expect(db.transaction(async (tx) => {
      rolledBack = await enqueueEvent(tx, { tenantId, type: 'crm.contact.created', source: 'crm', key: contactId, data: { n: 0 } });
      throw new Error('business change failed');
    })).rejects.toThrow('business change failed');
    const [contactEvent, walletEvent] = await write([
      {
        tenantId, type: 'crm.contact.created', source: 'crm', key: contactId, data: { firstName: 'Ada', n: 1 },
        schemaVersion: '1.1.0', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', correlationId: 'saga-7',
      },
      { tenantId, type: 'money.wallet.credited', source: 'money', key: walletId, data: { amount: 1500 } },
    ]) as [string, string];

    const events = await consumeTenantEvents({
      tenantId, topics: [topics.data.name, topics.money.name], until: hasAll([contactEvent, walletEvent]),
    });

    // The rolled-back row would have come first: lower seq, same key, same partition.
    expect(ids(events).has(rolledBack)).toBe(false);
    const occurredAt = (id: string) => db.oneFirst(sql.type(z.object({ at: z.string() }))`SELECT occurred_at AS at FROM outbox_events WHERE id = ${id}`);
    expect(events.find((event) => event.envelope.id === contactEvent)).toEqual({
      topic: 'platform.data.events',
      partition: expect.any(Number),
      offset: expect.any(Number),
      key: contactId,
      correlationId: 'saga-7',
      headers: { id: contactEvent, type: 'crm.contact.created', tenantId, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', correlationId: 'saga-7' },
      envelope: {
        id: contactEvent, type: 'crm.contact.created', source: 'crm', tenantId, data: { firstName: 'Ada', n: 1 },
        schemaVersion: '1.1.0', timestamp: await occurredAt(contactEvent), traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      },
    });
    expect(events.find((event) => event.envelope.id === walletEvent)).toMatchObject({
      topic: 'platform.money.events',
      key: walletId,
      correlationId: null,
      headers: { id: walletEvent, type: 'money.wallet.credited', tenantId },
      envelope: { source: 'money', schemaVersion: '1.0.0', traceId: null, data: { amount: 1500 } },
    });
  });

  it('keeps the order of each key across many batches with interleaved keys', async () => {
    const tenantId = newId();
    const keys = [newId(), newId(), newId(), newId()];
    const written: string[] = [];
    // 8 transactions of 25 rows, keys interleaved: 200 rows, 4 relay batches of 50.
    for (let t = 0; t < 8; t += 1) {
      written.push(...await write(Array.from({ length: 25 }, (_, i) => {
        const n = t * 25 + i;
        return { tenantId, type: 'crm.contact.updated', source: 'crm', key: keys[n % keys.length], data: { n } };
      })));
    }

    const events = await consumeTenantEvents({ tenantId, topics: [topics.data.name], until: hasAll(written) });

    for (const key of keys) {
      const ofKey = events.filter((event) => event.key === key);
      const firstSeen = [...new Map(ofKey.map((event) => [event.envelope.id, event.envelope.data.n as number])).values()];
      expect(firstSeen).toHaveLength(50);
      expect(firstSeen).toEqual([...firstSeen].sort((a, b) => a - b));
      expect(new Set(ofKey.map((event) => event.partition)).size).toBe(1);
    }
  });

  it('rejoins the election and goes on publishing when its database session is terminated', async () => {
    const terminated = await db.anyFirst(sql.type(z.object({ done: z.boolean() }))`
      SELECT pg_terminate_backend(pid) AS done FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    `);
    expect(terminated).toEqual([true]);
    const lost = await running.log.waitForMessage(SESSION_LOST);
    await running.log.waitFor((line) => line.msg === LEADER && Number(line.time) > Number(lost.time), 'leader again');

    const tenantId = newId();
    const [id] = await write(contactEventsOf(tenantId, 1)) as [string];
    const events = await consumeTenantEvents({ tenantId, topics: [topics.data.name], until: hasAll([id]) });
    expect(events.map((event) => event.envelope.id)).toEqual([id]);
  });
});

describe('relay linger', () => {
  it('sends a lone event after a quiet spell at once', async () => {
    // A minute's linger: an event held back for it would not be published within the wait below.
    const relay = await startRelay(undefined, { lingerMs: 60_000 });
    try {
      await relay.log.waitForMessage(LEADER);
      // Past its first (empty) read, so the event arrives as a wake-up, where lingering happens.
      await new Promise((resolve) => setTimeout(resolve, 3 * relaySettings.idlePollMs));
      const [id] = await write(contactEventsOf(newId(), 1)) as [string];
      const seq = await seqOf(id);
      await relay.log.waitFor((line) => line.msg === PUBLISHED && Number(line.lastSeq) >= seq, 'the lone event published');
    } finally {
      await relay.stop();
    }
  });

  it('sends the events committed within the linger after a batch in one batch', async () => {
    // A long linger, so both writes below commit within it however slow the machine.
    const relay = await startRelay(undefined, { lingerMs: 5000 });
    try {
      const tenantId = newId();
      // Once this has left, the relay is idle, waiting for a notification, and lingers until 5 s after it.
      const [settled] = await write(contactEventsOf(tenantId, 1)) as [string];
      const settledSeq = await seqOf(settled);
      await relay.log.waitFor((line) => line.msg === PUBLISHED && Number(line.lastSeq) >= settledSeq, 'the first event published');

      const [first] = await write(contactEventsOf(tenantId, 1, 1)) as [string];
      // Read at once, the first event would leave alone long before the second commits.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const [second] = await write(contactEventsOf(tenantId, 1, 2)) as [string];
      const [firstSeq, secondSeq] = [await seqOf(first), await seqOf(second)];

      const batch = await relay.log.waitFor((line) => line.msg === PUBLISHED && Number(line.lastSeq) >= secondSeq, 'the second event published');
      expect(Number(batch.firstSeq)).toBeLessThanOrEqual(firstSeq);
      expect(relay.log.lines.filter((line) => line.msg === PUBLISHED && Number(line.lastSeq) >= firstSeq)).toEqual([batch]);
    } finally {
      await relay.stop();
    }
  });
});

describe('relay while Kafka is unavailable', () => {
  it('keeps the rows, backs off with a counter, and publishes them once Kafka is back', async () => {
    const tenantId = newId();
    const down = await startRelay(['127.0.0.1:1']);
    try {
      await down.log.waitForMessage(LEADER);
      const [id] = await write(contactEventsOf(tenantId, 1)) as [string];
      const second = await down.log.waitFor((line) => line.msg === KAFKA_REFUSED && line.attempt === 2, 'second refusal');
      const first = down.log.lines.find((line) => line.msg === KAFKA_REFUSED && line.attempt === 1);

      expect([first?.delayMs, second.delayMs]).toEqual([50, 100]);
      expect(down.relay.status().publishFailures).toBeGreaterThanOrEqual(2);
      expect(await pendingOf(tenantId)).toBe(1);
      await down.stop();
      expect(down.relay.status().role).toBe('stopped');

      const healthy = await startRelay();
      try {
        const events = await consumeTenantEvents({ tenantId, topics: [topics.data.name], until: hasAll([id]) });
        expect(events[0].envelope.id).toBe(id);
      } finally {
        await healthy.stop();
      }
    } finally {
      await down.stop();
    }
  });
});

describe('relay housekeeping', () => {
  it('deletes rows published longer ago than the retention, and nothing else', async () => {
    const tenantId = newId();
    const [old, recent, pending] = await write(contactEventsOf(tenantId, 3)) as [string, string, string];
    await db.query(sql.unsafe`
      UPDATE outbox_events SET published_at = CASE id WHEN ${old} THEN now() - interval '169 hours' ELSE now() - interval '167 hours' END
      WHERE id IN (${old}, ${recent})
    `);
    const kept = () => db.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM outbox_events WHERE tenant_id = ${tenantId} ORDER BY seq`);

    // The relay tidies up when it becomes the leader, then every statusIntervalMs.
    const relay = await startRelay();
    try {
      const tidied = await relay.log.waitForMessage(TIDIED);
      expect(tidied).toMatchObject({ deleted: 1, retentionHours: 168 });
      expect(await kept()).toEqual([recent, pending]);
    } finally {
      await relay.stop();
    }
  });
});

describe('relay processes', () => {
  const children: ChildProcess[] = [];
  let buildDir: string;

  beforeAll(() => {
    // The relay runs as it does in production: the compiled entry point, built with tsconfig.build.json's
    // settings. Not into dist/: the running platform was started from it, and an app-up restart would load
    // a half-written build. A folder of this run's own instead, holding the relay's import graph only;
    // under node_modules/.cache so that, as from dist/, walking up finds the repository root
    // (common/paths.ts) and node_modules. tsc reports type errors of unrelated work in progress but still
    // emits, so only the output's presence is required.
    const cacheDir = join(repoRoot, 'node_modules/.cache');
    mkdirSync(cacheDir, { recursive: true });
    buildDir = mkdtempSync(join(cacheDir, 'outbox-relay-test-'));
    const project = join(buildDir, 'tsconfig.json');
    writeFileSync(project, JSON.stringify({
      extends: join(repoRoot, 'tsconfig.build.json'),
      compilerOptions: { rootDir: repoRoot, outDir: buildDir },
      files: [join(repoRoot, 'workers/outbox-relay.ts')],
      include: [],
    }));
    try {
      execFileSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', project], { stdio: 'pipe' });
    } catch (error) {
      process.stderr.write(`tsc reported errors (output is still emitted): ${String((error as { stdout?: Buffer }).stdout ?? error)}\n`);
    }
  }, 120_000);

  afterAll(() => {
    if (buildDir) rmSync(buildDir, { recursive: true, force: true });
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  function spawnRelay() {
    const log = new JsonLog();
    const child = spawn(process.execPath, [join(buildDir, 'workers/outbox-relay.js')], {
      env: {
        ...process.env, NODE_OPTIONS: '', NODE_ENV: 'test', LOG_LEVEL: 'info', DATABASE_OWNER_URL: scratch.ownerUrl,
        OUTBOX_BATCH_SIZE: '50', OUTBOX_IDLE_POLL_MS: '100',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => log.feed(chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => process.stderr.write(chunk));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    return { child, log, exited };
  }

  it('delivers every row at least once across a SIGKILL, including a row written while no relay ran', async () => {
    const tenantId = newId();
    const first = spawnRelay();
    await first.log.waitForMessage(LEADER);
    const written = await write(contactEventsOf(tenantId, 500));
    await first.log.waitForMessage(PUBLISHED);
    first.child.kill('SIGKILL');
    written.push(...await write(contactEventsOf(tenantId, 300, 500)));
    await first.exited;

    // Nothing runs now: this row can only leave through the restarted relay.
    const [afterCrash] = await write(contactEventsOf(tenantId, 1, 800)) as [string];
    expect(await pendingOf(tenantId)).toBeGreaterThanOrEqual(1);

    const second = spawnRelay();
    const events = await consumeTenantEvents({ tenantId, topics: [topics.data.name], until: hasAll([...written, afterCrash]) });
    const lastSeq = await seqOf(afterCrash);
    await second.log.waitFor((line) => line.msg === PUBLISHED && Number(line.lastSeq) >= lastSeq, 'batch with the last row');

    expect(ids(events).size).toBe(801);
    expect(await pendingOf(tenantId)).toBe(0);

    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual([0, null]);
    expect(second.log.lines.some((line) => line.msg === STOPPED)).toBe(true);
  });

  it('lets a standby take over when the leader is killed', async () => {
    const tenantId = newId();
    const leader = spawnRelay();
    await leader.log.waitForMessage(LEADER);
    const standby = spawnRelay();
    await standby.log.waitForMessage(STANDBY);

    leader.child.kill('SIGKILL');
    await leader.exited;
    await standby.log.waitForMessage(LEADER);
    const [id] = await write(contactEventsOf(tenantId, 1)) as [string];

    const events = await consumeTenantEvents({ tenantId, topics: [topics.data.name], until: hasAll([id]) });
    expect(events.map((event) => event.envelope.id)).toContain(id);

    standby.child.kill('SIGTERM');
    expect(await standby.exited).toEqual([0, null]);
  });
});
