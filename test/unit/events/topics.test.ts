import { defaultTopicFor, isTopicName, retentionHours, topicNames } from '../../../services/events/topics';

describe('default topic of an event type', () => {
  it.each([
    ['auth.user.created', 'platform.auth.events'],
    ['money.wallet.credited', 'platform.money.events'],
    ['billing.plan.changed', 'platform.billing.events'],
    ['audit.record.created', 'platform.audit.events'],
    ['module.registry.installed', 'platform.module.events'],
    ['files.file.uploaded', 'platform.files.events'],
    ['notify.email.sent', 'platform.notify.events'],
    ['crm.contact.created', 'platform.data.events'],
    // A module called "module" is an ordinary module: only module.registry.* is the registry's.
    ['module.widget.created', 'platform.data.events'],
    ['authx.user.created', 'platform.data.events'],
  ])('%s → %s', (type, topic) => {
    expect(defaultTopicFor(type)).toBe(topic);
  });
});

describe('topic catalogue', () => {
  it('has the eight topics of the catalogue', () => {
    expect([...topicNames].sort()).toEqual([
      'platform.audit.events', 'platform.auth.events', 'platform.billing.events', 'platform.data.events',
      'platform.files.events', 'platform.module.events', 'platform.money.events', 'platform.notify.events',
    ]);
  });

  it('recognises its names only', () => {
    expect(isTopicName('platform.money.events')).toBe(true);
    expect(isTopicName('platform.crm.events')).toBe(false);
  });

  it('keeps the audit topic 30 days and every other 7 (from configuration)', () => {
    expect(retentionHours('platform.audit.events', 168, 720)).toBe(720);
    expect(retentionHours('platform.auth.events', 168, 720)).toBe(168);
  });
});
