import { z } from 'zod';
import { BILLING_ENFORCEMENT_FLAG } from '../../../api/middleware/billing-enforcement';
import { newId } from '../../../common/ids';
import { createDbPool, sql, type DatabasePool } from '../../../db/pool';
import { startTestGateway, type TestGateway } from '../../helpers/app';
import { setSubscription } from '../../helpers/billing';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../../helpers/db';
import { waitFor } from '../../helpers/http';
import { get, registerAccount, type RegisteredAccount } from '../../helpers/identity';
import { addMember } from '../../helpers/rbac';
import { send } from '../../helpers/users';

/**
 * The global flag billing.enforcement switches the gateway's plan and subscription checks at run
 * time, and every gateway behind the load balancer applies a change within 1 s: PostgreSQL
 * announces it (migration 0035) and each gateway's flag cache reloads (api/runtime/flag-cache.ts).
 * Two gateways share the database; the flag is changed as the owner role, as an operator would
 * (the application role cannot write flags). Their interval reload is set to an hour, so only the
 * announcement, or the reload when listening resumes, can explain a change seen here.
 *
 * The flag is global: while it is off, every gateway on this database enforces nothing, so the
 * test restores it before it ends (the suite runs its files one after the other).
 */

/** The promise is 1 s; the rest is slack for CI's two shared, busy cores. */
const APPLIED_WITHIN_MS = 5_000;
/** A reconnection waits 250 ms, then connects and LISTENs, on the same busy cores. */
const RELISTENED_WITHIN_MS = 15_000;
jest.setTimeout(120_000);

const NO_INTERVAL = { FEATURE_FLAGS_REFRESH_MS: '3600000' };
const flagRow = z.object({ enabled: z.boolean() });
const newUser = () => ({ email: `flag.${newId()}@example.test`, firstName: 'Flo', lastName: 'Flag' });

let first: TestGateway;
let second: TestGateway;
let owner: DatabasePool;
let app: DatabasePool;
/** The flag's row as found, restored at the end (null: there was none; undefined: not read yet). */
let original: boolean | null | undefined;

/** Sets the global flag as the owner role, in one transaction, as an operator's SQL would. */
async function setFlag(enabled: boolean): Promise<void> {
  const updated = await owner.query(sql.unsafe`
    UPDATE feature_flags SET enabled = ${enabled}, updated_at = now() WHERE key = ${BILLING_ENFORCEMENT_FLAG} AND tenant_id IS NULL
  `);
  if (updated.rowCount === 0) {
    await owner.query(sql.unsafe`INSERT INTO feature_flags (key, enabled) VALUES (${BILLING_ENFORCEMENT_FLAG}, ${enabled})`);
  }
}

const bothGateways = () => [first, second];

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'enforcement-flag-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'enforcement-flag-test-app' });
  original = await owner.maybeOneFirst(sql.type(flagRow)`
    SELECT enabled FROM feature_flags WHERE key = ${BILLING_ENFORCEMENT_FLAG} AND tenant_id IS NULL
  `);
  await setFlag(true);
  [first, second] = await Promise.all([startTestGateway({ env: NO_INTERVAL }), startTestGateway({ env: NO_INTERVAL })]);
  await waitFor('both gateways to load their flags and listen', async () => bothGateways().every(
    (gateway) => gateway.runtime.flags.status().loaded && gateway.runtime.announcements.isListening,
  ));
});

afterAll(async () => {
  if (original === null) await owner?.query(sql.unsafe`DELETE FROM feature_flags WHERE key = ${BILLING_ENFORCEMENT_FLAG} AND tenant_id IS NULL`);
  else if (original !== undefined) await setFlag(original);
  await Promise.all([first?.close(), second?.close()]);
  await owner?.end();
  await app?.end();
});

interface Tenants {
  /** On the free plan with its 2 users (the owner and one member): POST /users is over the limit. */
  full: RegisteredAccount;
  /** Terminated: every request is refused while billing is enforced. */
  terminated: RegisteredAccount;
}

async function tenants(): Promise<Tenants> {
  const [full, terminated] = await Promise.all([registerAccount(first), registerAccount(first)]);
  await addMember(first, owner, full.tenant.id);
  // setSubscription drops the plan cached by the gateway it is given; each gateway has its own cache.
  for (const gateway of bothGateways()) {
    await setSubscription(gateway, owner, full.tenant.id, { planId: 'free', status: 'active' });
    await setSubscription(gateway, owner, terminated.tenant.id, { status: 'terminated' });
  }
  return { full, terminated };
}

/** What the gateway answers a creation over the plan limit, and any request of a terminated tenant. */
async function answers(gateway: TestGateway, { full, terminated }: Tenants) {
  const created = await send(gateway, 'POST', '/users', full.accessToken, newUser());
  const read = await get(gateway, '/users', terminated.accessToken);
  return { created: created.status, read: read.status, type: created.body.type };
}

/** Polls both gateways (a refused creation changes nothing) until they answer as expected, within `ms`. */
async function bothAnswer(what: string, expected: { created: number; read: number }, state: Tenants, ms: number): Promise<void> {
  await Promise.all(bothGateways().map((gateway, index) => waitFor(`gateway ${index + 1} to ${what}`, async () => {
    const { created, read } = await answers(gateway, state);
    return created === expected.created && read === expected.read;
  }, ms, 50)));
}

const ENFORCED = { created: 402, read: 402 };
const NOT_ENFORCED = { created: 201, read: 200 };

describe('billing.enforcement, applied by every gateway within 1 s (migration 0035)', () => {
  it('turned off, lets a creation over the plan limit and a terminated tenant through in both gateways; turned on, refuses them again', async () => {
    const state = await tenants();
    for (const gateway of bothGateways()) {
      expect(await answers(gateway, state)).toEqual({ ...ENFORCED, type: gateway.problemType('plan-limit-exceeded') });
    }
    const announced = bothGateways().map((gateway) => gateway.runtime.flags.stats.announcements);

    await setFlag(false);
    await bothAnswer('stop enforcing', NOT_ENFORCED, state, APPLIED_WITHIN_MS);
    bothGateways().forEach((gateway, index) => expect(gateway.runtime.flags.stats.announcements).toBeGreaterThan(announced[index]));

    await setFlag(true);
    await bothAnswer('enforce again', ENFORCED, state, APPLIED_WITHIN_MS);
  });

  it('applies a change committed while the listening connections were down once they listen again', async () => {
    const state = await tenants();
    const listens = bothGateways().map((gateway) => gateway.runtime.announcements.listens);
    // Both gateways of this process share the application_name.
    await app.query(sql.unsafe`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = ${`gateway-announcements-${process.pid}`} AND datname = current_database()
    `);
    await waitFor('both gateways to notice the lost connection', async () => bothGateways().every(
      (gateway, index) => !gateway.runtime.announcements.isListening || gateway.runtime.announcements.listens > listens[index],
    ), RELISTENED_WITHIN_MS, 5);
    // Usually committed in the gap (the first reconnection waits 250 ms), announced to no one; if a
    // gateway listens again first, it hears the announcement instead. Either way it must apply.
    await setFlag(false);
    await waitFor('both gateways to listen again', async () => bothGateways().every(
      (gateway, index) => gateway.runtime.announcements.isListening && gateway.runtime.announcements.listens > listens[index],
    ), RELISTENED_WITHIN_MS, 20);
    await bothAnswer('stop enforcing', NOT_ENFORCED, state, APPLIED_WITHIN_MS);

    await setFlag(true);
    await bothAnswer('enforce again', ENFORCED, state, APPLIED_WITHIN_MS);
  });
});
