import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { newId } from '../../common/ids';
import { repoRoot } from '../../common/paths';
import { createDbPool, sql, type DatabasePool } from '../../db/pool';
import { SetupRefused, SetupUsageError, setupOwner } from '../../scripts/platform/setup-owner';
import { migrateSharedDatabase, ownerUrl } from '../helpers/db';
import { GOOD_PASSWORD, uniqueEmail } from '../helpers/identity';
import { auditRecordsOf, createMember, outboxOfType } from '../helpers/users';

/**
 * `npm run platform -- setup-owner`: the platform tenant, the platform-scoped Platform Owner role,
 * the account and its membership, idempotently. Run from the sources, like the built command.
 */
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 4, name: 'setup-owner-test' });
});

afterAll(async () => {
  await owner?.end();
});

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [
    '-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'scripts/platform.ts'),
    ...args, '--database-url', ownerUrl(),
  ], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const state = z.object({
  account: z.record(z.string(), z.unknown()).nullable(),
  memberships: z.number(),
  roleAssignments: z.number(),
  platformTenants: z.number(),
  platformRoles: z.number(),
  outboxRows: z.number(),
});

/**
 * Everything the command could change, for the account of `email`. The outbox rows are only those of
 * the platform tenant about this account (keyed by it or naming it): other files write platform-tenant
 * rows of their own while this one runs, so a count of all of them would not be this command's doing.
 */
function stateOf(email: string) {
  return owner.one(sql.type(state)`
    SELECT (SELECT to_jsonb(u) FROM users u WHERE lower(u.email) = lower(${email})) AS account,
           (SELECT count(*)::int FROM memberships m JOIN users u ON u.id = m.user_id WHERE lower(u.email) = lower(${email})) AS memberships,
           (SELECT count(*)::int FROM user_roles ur JOIN users u ON u.id = ur.user_id WHERE lower(u.email) = lower(${email})) AS "roleAssignments",
           (SELECT count(*)::int FROM tenants WHERE kind = 'platform') AS "platformTenants",
           (SELECT count(*)::int FROM roles WHERE tenant_id IS NULL) AS "platformRoles",
           (SELECT count(*)::int FROM outbox_events o JOIN tenants t ON t.id = o.tenant_id JOIN users u ON lower(u.email) = lower(${email})
             WHERE t.kind = 'platform' AND (o.partition_key = u.id::text OR o.data::text LIKE '%' || u.id::text || '%')) AS "outboxRows"
  `);
}

const platformRole = z.object({ tenantId: z.string().nullable(), scope: z.string(), permissions: z.array(z.string()), builtIn: z.boolean() });

describe('setup-owner', () => {
  it('creates the Platform Owner once; a second run for the same e-mail exits 0 and changes nothing', async () => {
    const email = uniqueEmail('platform-owner');
    const first = cli('setup-owner', '--email', email, '--password', GOOD_PASSWORD);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(first.stdout).toContain(`account ${email}: created`);
    expect(first.stdout).toContain(`Platform Owner ${email} is set up.`);
    const after = await stateOf(email);
    // Its outbox rows: auth.user.created and the audit record.
    expect(after).toMatchObject({ memberships: 1, roleAssignments: 1, platformTenants: 1, platformRoles: 1, outboxRows: 2 });
    expect(after.account).toMatchObject({ email, email_verified: true, status: 'active', deleted_at: null });

    // Again, even with another password: nothing is touched, the password included.
    const second = cli('setup-owner', '--email', email.toUpperCase(), '--password', `${GOOD_PASSWORD}-other`);
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('nothing changed');
    expect(await stateOf(email)).toEqual(after);
  });

  it('makes the platform tenant and the platform-scoped role with every permission, system.* included', async () => {
    const email = uniqueEmail('platform-owner');
    const { tenantId, userId } = await setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined);
    const tenant = await owner.one(sql.type(z.object({ kind: z.string(), name: z.string() }))`SELECT kind, name FROM tenants WHERE id = ${tenantId}`);
    expect(tenant).toEqual({ kind: 'platform', name: 'Platform' });
    const role = await owner.one(sql.type(platformRole)`
      SELECT r.tenant_id AS "tenantId", r.scope, r.permissions, r.built_in AS "builtIn"
      FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ${userId} AND ur.tenant_id = ${tenantId}
    `);
    expect(role).toEqual({ tenantId: null, scope: 'platform', permissions: ['*'], builtIn: true });
    const created = (await outboxOfType(owner, tenantId, 'auth.user.created')).filter((e) => e.partitionKey === userId);
    expect(created).toEqual([expect.objectContaining({ data: expect.objectContaining({ user_id: userId, email, role: 'owner' }) })]);
    expect((await auditRecordsOf(owner, tenantId, 'auth.platform_owner.created')).filter((r) => r.entityId === userId)).toHaveLength(1);
  });

  it('agrees with itself when two runs for one e-mail race', async () => {
    const email = uniqueEmail('platform-owner');
    const runs = await Promise.all([1, 2, 3].map(() => setupOwner(owner, { email, password: GOOD_PASSWORD }, () => undefined)));
    expect(runs.filter((run) => run.changed)).toHaveLength(1);
    expect(new Set(runs.map((run) => run.userId)).size).toBe(1);
    expect(await stateOf(email)).toMatchObject({ memberships: 1, roleAssignments: 1, platformTenants: 1 });
  });

  it('applies the registration password rules and refuses bad usage with exit 2, changing nothing', async () => {
    const email = uniqueEmail('platform-owner');
    const refusals: [string, RegExp][] = [['short-pass', /TOO_SHORT/], ['password1234', /BREACHED_PASSWORD/]];
    for (const [password, message] of refusals) {
      await expect(setupOwner(owner, { email, password }, () => undefined)).rejects.toThrow(message);
    }
    await expect(setupOwner(owner, { email: 'not-an-address', password: GOOD_PASSWORD }, () => undefined)).rejects.toBeInstanceOf(SetupUsageError);
    expect((await stateOf(email)).account).toBeNull();

    const short = cli('setup-owner', '--email', email, '--password', 'short-pass');
    expect(short).toMatchObject({ status: 2, stderr: expect.stringContaining('TOO_SHORT') });
    expect(cli('setup-owner', '--email', email).status).toBe(2);
    expect(cli('create-owner', '--email', email, '--password', GOOD_PASSWORD).status).toBe(2);
    expect((await stateOf(email)).account).toBeNull();
  });

  it('makes an existing account a Platform Owner only with its own password, and keeps that password', async () => {
    // A customer's account (its tenant does not matter here).
    const tenantId = newId();
    await owner.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, 'Customer')`);
    await owner.query(sql.unsafe`INSERT INTO roles (id, tenant_id, name, built_in) VALUES (${newId()}, ${tenantId}, 'member', true)`);
    const customer = await createMember(owner, tenantId, 'member');
    const before = await stateOf(customer.email);

    await expect(setupOwner(owner, { email: customer.email, password: `${GOOD_PASSWORD}-wrong` }, () => undefined)).rejects.toBeInstanceOf(SetupRefused);
    expect(await stateOf(customer.email)).toEqual(before);
    expect(cli('setup-owner', '--email', customer.email, '--password', `${GOOD_PASSWORD}-wrong`).status).toBe(1);

    const joined = await setupOwner(owner, { email: customer.email, password: customer.password }, () => undefined);
    expect(joined).toMatchObject({ changed: true, userId: customer.id });
    const after = await stateOf(customer.email);
    expect(after).toMatchObject({ memberships: 2, roleAssignments: 2 });
    expect(after.outboxRows).toBe(before.outboxRows + 1); // the audit record; the account is not new
    expect(after.account).toEqual(before.account);
  });
});
