import { parseArgs } from 'node:util';
import { PermissionCache } from '../api/runtime/permission-cache';
import { PermissionResolver } from '../api/runtime/permission-resolver';
import { TenantVersionReader } from '../api/runtime/tenant-versions';
import type { AuthState } from '../common/context';
import { newId } from '../common/ids';
import { migrate } from '../db/migrate';
import { createDbPool, sql, type DatabasePool } from '../db/pool';
import { createScratchDatabase } from '../test/helpers/db';
import { measure, ratePerSecond as rate, type Phase } from './lib/load';
import { figure, reported, startResults } from './lib/results';

/**
 * The gateway's permission check with and without its cache (issue 4: "the cached path is much
 * faster than uncached"), against PostgreSQL in a scratch database.
 *
 *   npm run bench:permissions -- [--seconds 3] [--concurrency 1,32] [--tenants 20]
 *
 * Both resolvers answer the same question for users of `tenants` tenants, each holding a custom role
 * of 40 keys. "cached" is the gateway's configuration: every check still reads the tenant's RBAC
 * version (reads of one tick share one query), so the cache never answers older than the last
 * change. "uncached" reloads the user's grants on every check (TTL 0): one transaction of three
 * statements, which is what every check cost before the cache.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '1,32' }, tenants: { type: 'string', default: '20' } },
  });
  const seconds = Number(values.seconds);
  const results = startResults('identity-permissions', values);
  const scratch = await createScratchDatabase('platform_permissions_bench');
  const pools: DatabasePool[] = [];
  try {
    await migrate({ databaseUrl: scratch.ownerUrl, write: () => undefined });
    const owner = await createDbPool(scratch.ownerUrl, { maxPoolSize: 2, name: 'bench-owner' });
    pools.push(owner);
    const callers = await seedTenants(owner, Number(values.tenants));
    const app = await createDbPool(scratch.appUrl, { maxPoolSize: 10, name: 'bench-app' });
    pools.push(app);

    const resolverWith = (ttlMs: number) => new PermissionResolver(new PermissionCache({
      db: app, versions: new TenantVersionReader(app), ttlMs, maxEntries: 100_000,
    }));
    const variants = { cached: resolverWith(30_000), uncached: resolverWith(0) };

    console.log(`permission checks, ${callers.length} users in ${callers.length} tenants, ${seconds} s per phase`);
    console.log('variant    concurrency   checks/s     p50 ms   p99 ms');
    const phases: Phase[] = [];
    for (const concurrency of values.concurrency.split(',').map(Number)) {
      for (const [name, resolver] of Object.entries(variants)) {
        // Each check is for the next caller in turn, whichever loop makes it.
        let next = 0;
        const phase = await measure(`${name}, ${concurrency} concurrent`, concurrency, seconds, Number.MAX_SAFE_INTEGER, async () => {
          const caller = callers[(next += 1) % callers.length];
          if (!(await resolver.allows(caller, 'crm.contacts.read'))) throw new Error('the check should pass');
        });
        phases.push(phase);
        console.log(`${name.padEnd(10)} ${String(concurrency).padStart(11)} ${rate(phase).toFixed(0).padStart(10)} ${phase.p50.toFixed(3).padStart(10)} ${phase.p99.toFixed(3).padStart(8)}`);
      }
    }
    results.write({ callers: callers.length, phases }, [reported('a cached permission check (no target named)', phases
      .filter((phase) => phase.name.startsWith('cached'))
      .map((phase) => `${figure(rate(phase))}/s, p50 ${phase.p50.toFixed(2)} ms at ${phase.name.slice('cached, '.length)}`).join('; '))]);
  } finally {
    await Promise.allSettled(pools.map((pool) => pool.end()));
    await scratch.drop();
  }
}

/** One tenant per caller, each with a member holding a custom role of 40 keys (module keys registered for it). */
async function seedTenants(owner: DatabasePool, count: number): Promise<AuthState[]> {
  const callers: AuthState[] = [];
  for (let i = 0; i < count; i += 1) {
    const tenantId = newId();
    const userId = newId();
    const roleId = newId();
    const keys = Array.from({ length: 40 }, (_, k) => `crm.things${k}.read`).concat('crm.contacts.read');
    await owner.transaction(async (tx) => {
      await tx.query(sql.unsafe`INSERT INTO tenants (id, name) VALUES (${tenantId}, ${`bench ${i}`})`);
      await tx.query(sql.unsafe`INSERT INTO users (id, email) VALUES (${userId}, ${`bench.${userId}@example.test`})`);
      await tx.query(sql.unsafe`INSERT INTO memberships (tenant_id, user_id) VALUES (${tenantId}, ${userId})`);
      await tx.query(sql.unsafe`
        INSERT INTO permissions (tenant_id, key, module) SELECT ${tenantId}, key, 'crm' FROM unnest(${sql.array(keys, 'text')}) AS key
      `);
      await tx.query(sql.unsafe`
        INSERT INTO roles (id, tenant_id, name, permissions) VALUES (${roleId}, ${tenantId}, 'crm-reader', ${sql.array(keys, 'text')})
      `);
      await tx.query(sql.unsafe`INSERT INTO user_roles (tenant_id, user_id, role_id) VALUES (${tenantId}, ${userId}, ${roleId})`);
    });
    callers.push({ tenantId, userId, email: `bench.${userId}@example.test`, roles: ['crm-reader'] });
  }
  return callers;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
