import { permits } from '../../../services/access/permissions';

describe('permits', () => {
  it.each([
    [['users.list'], 'users.list', true],
    [['users.*'], 'users.list', true],
    [['*'], 'billing.plan.change', true],
    [['billing.*'], 'billing.plan.change', true],
    [['users.create'], 'users.list', false],
    [['user.*'], 'users.list', false],
    [[], 'users.list', false],
    [['users.list.*'], 'users.list', false],
  ])('%j grants %s: %s', (held, required, expected) => {
    expect(permits(held, required)).toBe(expected);
  });
});
