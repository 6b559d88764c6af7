import { Problem } from '../../../common/problems';
import type { ModuleCatalogue } from '../../../services/modules/catalogue';
import type { ModuleManifest } from '../../../services/modules/manifest';
import { checkReplayWindow, positionOf } from '../../../services/events/group-offsets';
import { checkSubscription, tenantGroupOf } from '../../../services/events/subscription-rules';

/** The rules of the consumer-group RPCs that need no broker: names, declarations, positions, the replay window. */

const TENANT = '0b5a8d3e-0000-4000-8000-000000000001';

async function refusal(work: () => unknown): Promise<{ type: string; detail: string }> {
  try {
    await work();
  } catch (error) {
    if (error instanceof Problem) return { type: error.type, detail: error.detail };
    throw error;
  }
  throw new Error('not refused');
}

describe('tenantGroupOf', () => {
  it('gives the tenant’s Kafka group id, so two tenants’ groups of one name never meet', () => {
    expect(tenantGroupOf(TENANT, 'platform.auth.events', 'crm.user-created')).toEqual({
      topic: 'platform.auth.events', group: 'crm.user-created', tenantId: TENANT, groupId: `tenant.${TENANT}.crm.user-created`,
    });
  });

  it.each([
    ['', 'crm.h', 'validation-error'],
    ['platform.nothing.events', 'crm.h', 'not-found'],
    ['platform.auth.events', '', 'validation-error'],
    ['platform.auth.events', 'crm', 'validation-error'],
    ['platform.auth.events', 'CRM.h', 'validation-error'],
    ['platform.auth.events', 'crm.h.x', 'validation-error'],
  ])('refuses topic %j with group %j: %s', async (topic, group, type) => {
    expect((await refusal(() => tenantGroupOf(TENANT, topic, group))).type).toBe(type);
  });
});

describe('checkSubscription', () => {
  const manifest = { slug: 'crm', events: { publishes: [], subscribes: ['auth.user.created', 'money.wallet.credited'] } } as unknown as ModuleManifest;
  const catalogue = { get: (slug: string) => (slug === 'crm' ? manifest : undefined) } as unknown as ModuleCatalogue;
  const deps = (active: boolean) => ({ catalogue, installed: { isActive: async () => active } });

  it('gives the types of the module’s events.subscribes that go to the topic', async () => {
    expect(await checkSubscription(deps(true), TENANT, 'platform.auth.events', 'crm.h')).toMatchObject({ module: 'crm', types: ['auth.user.created'] });
    expect(await checkSubscription(deps(true), TENANT, 'platform.money.events', 'crm.h')).toMatchObject({ types: ['money.wallet.credited'] });
  });

  it.each([
    ['platform.data.events', 'crm.h', true, 'Module crm may not subscribe to platform.data.events: its manifest declares no type of platform.data.events in events.subscribes'],
    ['platform.auth.events', 'billing.h', true, 'Module billing may not subscribe to platform.auth.events: there is no module billing'],
    ['platform.auth.events', 'crm.h', false, 'Module crm may not subscribe to platform.auth.events: the module is not installed and active for this tenant'],
  ])('refuses %s for %s (installed: %s) as event-subscribe-not-declared', async (topic, group, active, detail) => {
    expect(await refusal(() => checkSubscription(deps(active), TENANT, topic, group))).toEqual({ type: 'event-subscribe-not-declared', detail });
  });
});

describe('positionOf', () => {
  const bounds = [{ partition: 0, low: 0n, high: 10n }, { partition: 1, low: 0n, high: 7n }, { partition: 2, low: 3n, high: 3n }];

  it('sums committed and high watermarks; lag is their difference', () => {
    expect(positionOf([{ partition: 0, offset: 4n }, { partition: 1, offset: 7n }, { partition: 2, offset: 3n }], bounds))
      .toEqual({ current: 14n, latest: 20n, lag: 6n });
  });

  it('counts a partition the group has no offset on at its end, and knows no group that never committed', () => {
    expect(positionOf([{ partition: 0, offset: 4n }], bounds)).toEqual({ current: 14n, latest: 20n, lag: 6n });
    expect(positionOf([], bounds)).toBeNull();
  });
});

describe('checkReplayWindow', () => {
  const now = Date.parse('2026-03-01T00:00:00Z');
  const hour = 3_600_000;
  const retention = { standardHours: 168, auditHours: 720 };
  const group = (topic: string) => tenantGroupOf(TENANT, topic, 'crm.h');

  it('accepts the retention window, bounds included', () => {
    expect(() => checkReplayWindow(group('platform.auth.events'), now - 168 * hour, retention, now)).not.toThrow();
    expect(() => checkReplayWindow(group('platform.auth.events'), now, retention, now)).not.toThrow();
    expect(() => checkReplayWindow(group('platform.audit.events'), now - 720 * hour, retention, now)).not.toThrow();
  });

  it('is replay-out-of-range before the topic’s retention or in the future', async () => {
    expect(await refusal(() => checkReplayWindow(group('platform.auth.events'), now - 168 * hour - 1, retention, now))).toEqual({
      type: 'replay-out-of-range',
      detail: 'from_timestamp 2026-02-21T23:59:59.999Z is older than the 168 h retention of platform.auth.events (the oldest is 2026-02-22T00:00:00.000Z)',
    });
    expect((await refusal(() => checkReplayWindow(group('platform.audit.events'), now - 721 * hour, retention, now))).type).toBe('replay-out-of-range');
    expect((await refusal(() => checkReplayWindow(group('platform.auth.events'), now + 1, retention, now))).detail).toContain('in the future');
  });
});
