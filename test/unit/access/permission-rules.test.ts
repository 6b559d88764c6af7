import { checkRolePermissions, stalePermissionsOf } from '../../../services/access/permission-rules';
import { isProblem, type Problem } from '../../../common/problems';
import type { RegisteredPermission } from '../../../db/queries/access/permissions.queries';

const registry: RegisteredPermission[] = [
  { key: 'users.list', module: 'system', description: '', archived: false },
  { key: 'billing.plan.change', module: 'system', description: '', archived: false },
  { key: 'crm.contacts.read', module: 'crm', description: '', archived: false },
  { key: 'shop.orders.read', module: 'shop', description: '', archived: true },
];

function refusal(requested: string[], heldBefore: string[] = []): Problem | null {
  try {
    checkRolePermissions(requested, { registry, heldBefore, field: 'permissions' });
    return null;
  } catch (error) {
    if (isProblem(error)) return error;
    throw error;
  }
}

describe('keys a tenant role may be given', () => {
  it.each([
    [['users.list', 'crm.contacts.read'], []],
    [['users.*', 'billing.*', 'crm.*'], []],
    [['shop.orders.read'], ['shop.orders.read']],
    [['shop.*'], ['shop.*']],
    [[], []],
  ])('accepts %j (held before: %j)', (requested, heldBefore) => {
    expect(refusal(requested, heldBefore)).toBeNull();
  });

  it.each([
    ['*', /owner role only/],
    ['system.backup', /platform-only/],
    ['system.*', /platform-only/],
    ['platform.anything', /platform-only/],
    ['crm.contacts.delete', /not a registered permission/],
    ['shop.orders.read', /archived/],
    ['shop.*', /not the wildcard of a known module/],
    ['users.list.*', /not the wildcard of a known module/],
    ['nobody.*', /not the wildcard of a known module/],
  ])('refuses %s', (key, message) => {
    const problem = refusal(['users.list', key]);
    expect(problem?.type).toBe('validation-error');
    expect(problem?.extensions.errors).toEqual([{ field: 'permissions[1]', code: 'INVALID_VALUE', message: expect.stringMatching(message) }]);
  });
});

describe('stale permissions', () => {
  it('names archived keys and wildcards of modules with only archived keys', () => {
    expect(stalePermissionsOf(['users.list', 'shop.orders.read', 'shop.*', 'crm.*', 'users.*'], registry)).toEqual(['shop.orders.read', 'shop.*']);
  });
});
