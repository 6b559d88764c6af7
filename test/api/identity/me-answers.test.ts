import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { call, waitFor } from '../../helpers/http';
import { get, registerAccount } from '../../helpers/identity';
import { turnOnMfa } from '../../helpers/mfa';
import { addMember, builtInRoleId, send } from '../../helpers/rbac';

/**
 * GET /auth/me answered from the gateway's memory (api/runtime/me-cache.ts, migration 0024): an
 * answer is reused until PostgreSQL announces a change of its account or of its tenant's RBAC; a
 * change made through the gateway shows on the very next request even when its announcement has
 * not arrived yet; while the gateway is not listening, every request reads.
 */

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  await migrateSharedDatabase();
  gateway = await startTestGateway();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'me-answers-test-owner' });
  await waitFor('the gateway to listen for announcements', async () => gateway.runtime.announcements.isListening);
});

afterAll(async () => {
  await gateway?.close();
  await owner?.end();
});

const answers = () => gateway.runtime.meAnswers;
const me = async (token: string) => (await get<{ firstName: string; roles: string[]; mfaEnabled: boolean }>(gateway, '/auth/me', token)).body;

/** The value of a line of /metrics, by its name and labels as printed. */
async function metric(line: string): Promise<number> {
  const text = (await call<string>(`${gateway.baseUrl}/metrics`)).body;
  const found = text.split('\n').find((candidate) => candidate.startsWith(`${line} `));
  return found === undefined ? NaN : Number(found.slice(line.length + 1));
}

/** Makes the gateway deaf to announcements (as if they were late) until the returned function is called. */
function withoutAnnouncements(): () => void {
  const accounts = jest.spyOn(answers(), 'notified').mockImplementation(() => undefined);
  const versions = jest.spyOn(gateway.runtime.access.versions, 'notified').mockImplementation(() => undefined);
  return () => {
    accounts.mockRestore();
    versions.mockRestore();
  };
}

describe('GET /auth/me answers kept by the gateway', () => {
  it('answers a repeated request from memory and shows a change made outside the gateway once it is announced', async () => {
    const account = await registerAccount(gateway, { firstName: 'Ada' });
    expect(await me(account.accessToken)).toMatchObject({ firstName: 'Ada' });
    const { misses } = answers().stats;
    expect(await me(account.accessToken)).toMatchObject({ firstName: 'Ada' });
    expect(answers().stats.misses).toBe(misses);
    expect(await metric('gateway_cache_lookups_total{cache="me",result="hit"}')).toBe(answers().stats.hits);
    expect(await metric('gateway_announcements_listening')).toBe(1);

    // As a worker or an operator would: another connection, another process's transaction.
    await owner.query(sql.unsafe`UPDATE users SET first_name = 'Grace' WHERE id = ${account.user.id}`);
    await waitFor('the renamed account in /auth/me', async () => (await me(account.accessToken)).firstName === 'Grace', 10_000, 20);

    const role = await builtInRoleId(owner, account.tenant.id, 'member');
    await owner.query(sql.unsafe`INSERT INTO user_roles (tenant_id, user_id, role_id) VALUES (${account.tenant.id}, ${account.user.id}, ${role})`);
    await waitFor('the role given outside in /auth/me', async () => (await me(account.accessToken)).roles.includes('member'), 10_000, 20);
  });

  it('shows changes made through the gateway on the next request, before their announcements arrive', async () => {
    const account = await registerAccount(gateway, { firstName: 'Ada' });
    const member = await addMember(gateway, owner, account.tenant.id);
    await me(account.accessToken);
    await me(member.token);
    const hear = withoutAnnouncements();
    try {
      expect((await send(gateway, 'PATCH', `/users/${account.user.id}`, account.accessToken, { firstName: 'Grace' })).status).toBe(200);
      expect(await me(account.accessToken)).toMatchObject({ firstName: 'Grace' });

      // Another account's change, made by the tenant's owner.
      const admin = await builtInRoleId(owner, account.tenant.id, 'admin');
      expect((await send(gateway, 'POST', `/users/${member.userId}/roles`, account.accessToken, { role_id: admin })).status).toBeLessThan(300);
      expect((await me(member.token)).roles).toContain('admin');

      await turnOnMfa(gateway, account);
      expect(await me(account.accessToken)).toMatchObject({ mfaEnabled: true });
    } finally {
      hear();
    }
  });

  it('reads on every request while it is not listening', async () => {
    const account = await registerAccount(gateway);
    await gateway.runtime.announcements.stop();
    expect(await metric('gateway_announcements_listening')).toBe(0);
    await me(account.accessToken);
    const { misses } = answers().stats;
    await me(account.accessToken);
    expect(answers().stats.misses).toBe(misses + 1);

    await owner.query(sql.unsafe`UPDATE users SET first_name = 'Grace' WHERE id = ${account.user.id}`);
    expect(await me(account.accessToken)).toMatchObject({ firstName: 'Grace' });
  });
});
