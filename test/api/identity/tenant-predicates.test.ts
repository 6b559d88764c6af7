import { z } from 'zod';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import {
  lockMembership, revokeMemberSessions, selectMember, selectMembers, updateAccountStatus, updateMembershipStatus,
} from '../../../db/queries/identity/members.queries';
import {
  clearRecoveryFailures, consumeRecoveryCode, countRecoveryCodes, lockAccount, lockRecoveryFailures, replaceRecoveryCodes,
} from '../../../db/queries/identity/recovery.queries';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { registerAccount, type RegisteredAccount } from '../../helpers/identity';

/**
 * Tenant scoping twice (issue 15): the member and recovery queries name the tenant themselves, so
 * they hold even where row-level security does not apply. Each is run on the owner role (which
 * bypasses it) in tenant A's name against tenant B's user: nothing is read, locked or changed.
 */
let gateway: TestGateway;
let owner: DatabasePool;
let a: RegisteredAccount;
let b: RegisteredAccount;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'tenant-predicates-owner' });
  [a, b] = [await registerAccount(gateway), await registerAccount(gateway)];
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const accountState = z.object({
  status: z.string(), membership: z.string(), liveSessions: z.number(), codes: z.number(), failures: z.number(),
});

/** B's account as it stands: what a query in A's name must leave untouched. */
function stateOfB() {
  return owner.one(sql.type(accountState)`
    SELECT u.status,
           (SELECT m.status FROM memberships m WHERE m.tenant_id = ${b.tenant.id} AND m.user_id = u.id) AS membership,
           (SELECT count(*) FROM refresh_tokens r WHERE r.user_id = u.id AND r.revoked_at IS NULL)::integer AS "liveSessions",
           (SELECT count(*) FROM recovery_codes c WHERE c.user_id = u.id)::integer AS codes,
           (SELECT count(*) FROM recovery_failures f WHERE f.user_id = u.id)::integer AS failures
    FROM users u WHERE u.id = ${b.user.id}`);
}

describe('identity queries in one tenant’s name', () => {
  it('read and lock nothing of another tenant’s member', async () => {
    await owner.transaction(async (tx) => {
      expect(await selectMember(tx, a.tenant.id, b.user.id)).toBeNull();
      expect(await lockMembership(tx, a.tenant.id, b.user.id)).toBe(false);
      expect((await selectMembers(tx, a.tenant.id, { limit: 100, includeDeleted: true })).map((member) => member.id)).toEqual([a.user.id]);
      expect(await countRecoveryCodes(tx, a.tenant.id, b.user.id)).toBe(0);
      expect(await lockRecoveryFailures(tx, a.tenant.id, b.user.id)).toBeNull();
      // The same calls in B's own name do see B: the predicate is the tenant, not a blanket refusal.
      expect(await selectMember(tx, b.tenant.id, b.user.id)).toMatchObject({ id: b.user.id });
      expect(await countRecoveryCodes(tx, b.tenant.id, b.user.id)).toBe(10);
      throw new Error('rollback');
    }).catch((error: unknown) => {
      if (!(error instanceof Error) || error.message !== 'rollback') throw error;
    });
  });

  it('change nothing of another tenant’s member', async () => {
    const before = await stateOfB();
    expect(before).toMatchObject({ status: 'active', membership: 'active', codes: 10, failures: 0 });
    await owner.transaction(async (tx) => {
      await updateMembershipStatus(tx, a.tenant.id, b.user.id, 'blocked');
      await revokeMemberSessions(tx, a.tenant.id, b.user.id);
      await updateAccountStatus(tx, a.tenant.id, b.user.id, 'locked');
      await lockAccount(tx, a.tenant.id, b.user.id);
      await replaceRecoveryCodes(tx, a.tenant.id, b.user.id, [Buffer.alloc(32, 1)]);
      expect(await consumeRecoveryCode(tx, a.tenant.id, b.user.id, Buffer.alloc(32, 1))).toBe(false);
      await clearRecoveryFailures(tx, a.tenant.id, b.user.id);
    });
    expect(await stateOfB()).toEqual(before);
  });
});
