import type { ModuleSubscriber } from '../../../common/event-subscribers';
import { groupModule, isGroupName, kafkaGroupId, parseKafkaGroupId } from '../../../services/events/consumers/group-names';
import { loadModuleSubscribers, SHIPPED_SUBSCRIBER_CODE } from '../../../services/data/module-subscribers';
import { ManifestError, ModuleCatalogue } from '../../../services/modules/catalogue';
import type { ModuleManifest } from '../../../services/modules/manifest';
import { contactNameOf } from '../../../modules/crm/subscribers';
import { crm } from '../../helpers/data-models';

/** Consumer group names (group-names.ts), the module subscriber registry (services/data/module-subscribers.ts) and crm's subscriber. */

const TENANT = '01968f1e-7a7b-7cc3-a5a8-0d6f3f1e2a12';

describe('group names', () => {
  it.each([
    ['crm.user-created', true],
    ['billing.usage_sync', true],
    ['crm2.a', true],
    ['crm', false],
    ['crm.', false],
    ['.user-created', false],
    ['Crm.user-created', false],
    ['crm.user.created', false],
    ['crm.1st', false],
    ['1crm.user', false],
    [`tenant.${TENANT}.crm.user-created`, false],
    [`crm.${'x'.repeat(200)}`, false],
  ])('%s → %s', (name, valid) => {
    expect(isGroupName(name)).toBe(valid);
  });

  it('names the consuming module by the first segment', () => {
    expect(groupModule('crm.user-created')).toBe('crm');
  });

  it('runs a platform group as its name and a tenant subscription under the tenant, and reads both back', () => {
    expect(kafkaGroupId('crm.user-created')).toBe('crm.user-created');
    expect(kafkaGroupId('crm.user-created', null)).toBe('crm.user-created');
    expect(kafkaGroupId('crm.user-created', TENANT)).toBe(`tenant.${TENANT}.crm.user-created`);
    expect(parseKafkaGroupId(`tenant.${TENANT}.crm.user-created`)).toEqual({ tenantId: TENANT, group: 'crm.user-created' });
    expect(parseKafkaGroupId('crm.user-created')).toEqual({ tenantId: null, group: 'crm.user-created' });
  });
});

const shop = (subscribes: string[]): ModuleManifest => ({
  slug: 'shop', name: 'Shop', version: '1.0.0', description: '', permissions: [], hooks: [], models: {},
  events: { publishes: [], subscribes },
});

const subscriber = (name: string, events: string[]): ModuleSubscriber => ({ name, events, handle: async () => undefined });

describe('loadModuleSubscribers', () => {
  it('makes each subscriber the group <module>.<name> on the topic of its types', () => {
    const [group, ...rest] = loadModuleSubscribers(new ModuleCatalogue([shop(['auth.user.created', 'auth.user.deleted'])]),
      new Map([['shop', [subscriber('users', ['auth.user.created', 'auth.user.deleted'])]]]));
    expect(rest).toHaveLength(0);
    expect(group).toMatchObject({ module: 'shop', group: 'shop.users', topic: 'platform.auth.events', events: new Set(['auth.user.created', 'auth.user.deleted']) });
  });

  it('refuses at start-up, all at once, what the manifest does not allow', () => {
    const load = () => loadModuleSubscribers(new ModuleCatalogue([shop(['auth.user.created', 'money.wallet.credited'])]), new Map([['shop', [
      subscriber('Users', ['auth.user.created']),
      subscriber('wallets', ['money.wallet.debited']),
      subscriber('both', ['auth.user.created', 'money.wallet.credited']),
      subscriber('nothing', []),
      subscriber('nothing', ['auth.user.created']),
    ]]]));
    expect(load).toThrow(ManifestError);
    expect(load).toThrow(/subscriber Users makes no consumer group name \(shop\.Users\)/);
    expect(load).toThrow(/subscriber wallets receives money\.wallet\.debited, which events\.subscribes does not declare/);
    expect(load).toThrow(/subscriber both receives types of platform\.auth\.events and platform\.money\.events; a group reads one topic/);
    expect(load).toThrow(/subscriber nothing receives no event type/);
    expect(load).toThrow(/subscriber nothing is exported twice/);
  });

  it('ignores code of a module the catalogue does not hold', () => {
    expect(loadModuleSubscribers(new ModuleCatalogue([]), new Map([['shop', [subscriber('users', ['auth.user.created'])]]]))).toEqual([]);
  });

  it('loads the shipped crm subscriber as crm.user-created on the auth topic', () => {
    const groups = loadModuleSubscribers(new ModuleCatalogue([crm]), SHIPPED_SUBSCRIBER_CODE);
    expect(groups.map(({ group, topic }) => ({ group, topic }))).toEqual([{ group: 'crm.user-created', topic: 'platform.auth.events' }]);
  });
});

describe('crm: a new user\'s contact name', () => {
  it.each([
    ['Ada Lovelace', 'ada@example.test', 'Ada Lovelace'],
    ['  Grace  ', 'grace@example.test', 'Grace'],
    ['ada.lovelace@example.test', 'ada.lovelace@example.test', 'ada.lovelace'],
    ['ADA@EXAMPLE.TEST', 'ada@example.test', 'ada'],
    ['', 'ada@example.test', 'ada'],
    [undefined, 'ada@example.test', 'ada'],
    [42, 'ada@example.test', 'ada'],
  ])('%p with %s → %s', (displayName, email, expected) => {
    expect(contactNameOf(displayName, email)).toBe(expected);
  });
});
