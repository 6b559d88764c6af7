import { isEventType, isSchemaVersion } from '../../../services/events/event-rules';

describe('event types: <domain>.<entity>.<action>', () => {
  it.each([
    ['auth.user.created', true],
    ['money.hold.expired', true],
    ['module.registry.installed', true],
    ['auth.api_key.revoked', true],
    ['crm.contact.created', true],
    ['crm.contact', false],
    ['Crm.contact.created', false],
    ['crm..created', false],
    ['crm.contact.created.', false],
    ['1crm.contact.created', false],
    ['crm.contact-person.created', false],
  ])('%s → %s', (type, valid) => {
    expect(isEventType(type)).toBe(valid);
  });
});

describe('schema versions: semantic, major.minor.patch', () => {
  it.each([
    ['1.0.0', true],
    ['10.20.30', true],
    ['1.0', false],
    ['v1.0.0', false],
    ['1.0.0-beta', false],
  ])('%s → %s', (version, valid) => {
    expect(isSchemaVersion(version)).toBe(valid);
  });
});
