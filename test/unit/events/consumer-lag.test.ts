import type { Admin } from '../../../common/kafka';
import type { Logger } from '../../../common/logger';
import { ConsumerLag, levelOf, TENANT_GROUP_WATCH_MS, type WatchedGroup } from '../../../services/events/consumer-lag';

/**
 * Consumer lag (docs/reference/events.md#rule-21) over a broker whose offsets the test sets and a clock it
 * moves: lag in messages, lag age (the age of the oldest message not passed, dated by the samples'
 * high watermarks), the alert levels and the suppression after a bulk replay.
 */

const TOPIC = 'platform.auth.events';
const tenantGroup: WatchedGroup = { groupId: 'tenant.0b5a8d3e-0000-4000-8000-000000000001.crm.h', group: 'crm.h', tenantId: '0b5a8d3e-0000-4000-8000-000000000001', topic: TOPIC };
const platformGroup: WatchedGroup = { groupId: 'crm.user-created', group: 'crm.user-created', tenantId: null, topic: TOPIC };

/** One partition: its high watermark, and each group's committed offset (absent: never committed). */
class FakeBroker {
  high = 0;
  committed = new Map<string, number>();
  down = false;

  admin(): Admin {
    const check = () => { if (this.down) throw new Error('broker down'); };
    return {
      connect: async () => check(),
      fetchTopicOffsets: async () => {
        check();
        return [{ partition: 0, offset: String(this.high), high: String(this.high), low: '0' }];
      },
      fetchOffsets: async ({ groupId }: { groupId: string }) => {
        check();
        return [{ topic: TOPIC, partitions: [{ partition: 0, offset: String(this.committed.get(groupId) ?? -1), metadata: null }] }];
      },
    } as unknown as Admin;
  }
}

const logger = { warn: () => undefined, info: () => undefined } as unknown as Logger;

function setUp(open: WatchedGroup[] = [tenantGroup], platform: WatchedGroup[] = []) {
  const broker = new FakeBroker();
  let now = 1_000_000;
  const lag = new ConsumerLag(
    { admin: broker.admin(), platformGroups: () => platform, openGroups: () => open },
    { sampleIntervalMs: 15_000, bulkImportSuppressMinutes: 30 }, logger, () => now,
  );
  const at = async (seconds: number) => {
    now = 1_000_000 + seconds * 1000;
    await lag.sample();
    return lag.snapshot().find((entry) => entry.groupId === tenantGroup.groupId) ?? lag.snapshot()[0];
  };
  return { broker, lag, at };
}

describe('lag alert levels (docs/reference/events.md#rule-21)', () => {
  it.each([
    [0, 'none'], [60, 'none'], [61, 'warning'], [300, 'warning'], [301, 'error'], [900, 'error'], [901, 'critical'],
  ])('a lag age of %i s is %s', (seconds, level) => {
    expect(levelOf(seconds)).toBe(level);
  });
});

describe('ConsumerLag', () => {
  it('is 0 messages and 0 s for a group that has caught up', async () => {
    const { broker, at } = setUp();
    broker.high = 10;
    broker.committed.set(tenantGroup.groupId, 10);
    expect(await at(0)).toMatchObject({ lag: 0n, ageSeconds: 0, level: 'none', suppressed: false });
  });

  it('ages a stuck group from the sample that first saw a message it has not passed, up to critical', async () => {
    const { broker, at } = setUp();
    broker.high = 10;
    broker.committed.set(tenantGroup.groupId, 10);
    await at(0);
    broker.high = 15;
    expect(await at(15)).toMatchObject({ lag: 5n, ageSeconds: 0, level: 'none' });
    expect(await at(76)).toMatchObject({ lag: 5n, ageSeconds: 61, level: 'warning' });
    expect(await at(15 + 301)).toMatchObject({ ageSeconds: 301, level: 'error' });
    // Past the 20 minutes of history the oldest sample still dates the message.
    expect(await at(15 + 1500)).toMatchObject({ ageSeconds: 1500, level: 'critical' });
    broker.committed.set(tenantGroup.groupId, 15);
    expect(await at(1530)).toMatchObject({ lag: 0n, ageSeconds: 0, level: 'none' });
  });

  it('dates the oldest message not passed, not the time since the group last moved', async () => {
    const { broker, at } = setUp();
    broker.committed.set(tenantGroup.groupId, 0);
    broker.high = 10;
    await at(0);
    broker.high = 20;
    await at(60);
    // The group moved, but is still behind messages seen at 0 s.
    broker.committed.set(tenantGroup.groupId, 8);
    broker.high = 30;
    expect(await at(120)).toMatchObject({ lag: 22n, ageSeconds: 120, level: 'warning' });
    // Past the first ten: the oldest it has not read was seen at 60 s.
    broker.committed.set(tenantGroup.groupId, 12);
    expect(await at(130)).toMatchObject({ lag: 18n, ageSeconds: 70, level: 'warning' });
  });

  it('suppresses alerts for BROKER_BULK_IMPORT_SUPPRESS_MINUTES after a replay that pushed lag over 100 000, not after a smaller one', async () => {
    const { broker, lag, at } = setUp();
    broker.committed.set(tenantGroup.groupId, 0);
    broker.high = 150_000;
    await at(0);
    lag.replayed(tenantGroup, 150_000n);
    expect(await at(16 * 60)).toMatchObject({ lag: 150_000n, level: 'none', suppressed: true });
    expect(await at(30 * 60 - 1)).toMatchObject({ suppressed: true });
    expect(await at(30 * 60 + 1)).toMatchObject({ level: 'critical', suppressed: false });

    lag.replayed(tenantGroup, 100_000n);
    expect(await at(31 * 60)).toMatchObject({ level: 'critical', suppressed: false });
  });

  it('watches a tenant group for an hour after its last stream closed, and forgets an unsubscribed one at once', async () => {
    const open = [tenantGroup];
    const { broker, lag, at } = setUp(open, [platformGroup]);
    broker.committed.set(tenantGroup.groupId, 0);
    broker.committed.set(platformGroup.groupId, 0);
    await at(0);
    open.length = 0;
    await at(TENANT_GROUP_WATCH_MS / 1000);
    expect(lag.snapshot().map((entry) => entry.group)).toEqual(['crm.user-created', 'crm.h']);
    await at(TENANT_GROUP_WATCH_MS / 1000 + 1);
    expect(lag.snapshot().map((entry) => entry.group)).toEqual(['crm.user-created']);

    open.push(tenantGroup);
    await at(4000);
    lag.forget(tenantGroup.groupId);
    expect(lag.snapshot().map((entry) => entry.group)).toEqual(['crm.user-created']);
  });

  it('reports nothing for a group that has never committed, and keeps the last sample while the broker is down', async () => {
    const { broker, lag, at } = setUp();
    broker.high = 7;
    expect(await at(0)).toMatchObject({ lag: 0n, ageSeconds: 0 });
    broker.committed.set(tenantGroup.groupId, 2);
    expect(await at(15)).toMatchObject({ lag: 5n });
    broker.down = true;
    broker.high = 9;
    expect(await at(30)).toMatchObject({ lag: 5n });
    expect(lag.snapshot()).toHaveLength(1);
  });
});
