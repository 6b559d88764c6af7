import { z } from 'zod';
import { newId } from '../../common/ids';
import { sql, type DatabasePool } from '../../db/pool';
import { addMembership } from '../../test/helpers/identity';

/**
 * The table sizes of bench/data.bench.ts (issue 16: 1 000 000 contacts across 100 tenants), seeded
 * once and reused. Tenants are real ones (registered through the API, crm installed through the
 * API), so their rows in tenants, subscriptions, roles and tenant_modules are what production has;
 * the records are written with SQL as the owner role, a tenant at a time (row-level security is
 * FORCEd on the module tables, the owner included), in rounds that interleave the tenants, as
 * concurrent tenants' writes interleave on disk. Ids are UUID v7 from each row's created_at.
 *
 * The seed is recorded in `bench.data_seed` (a schema of the benchmarks' own, not the platform's):
 * its parameters, its tenants and the account the bench reads as. A seed of other parameters, or one
 * cut short, has its records deleted before the new one is written.
 */
export interface SeedSize {
  rows: number;
  tenants: number;
  companies: number;
}

export interface DataSeed extends SeedSize {
  /** The tenant the bench reads; the first of `tenantIds`. */
  tenantId: string;
  tenantIds: string[];
  /** A member of `tenantId` whose role holds settings.read, crm.contacts.read and crm.companies.read, nothing more. */
  readerEmail: string;
}

/** The password of every account the seed registers. */
export const SEED_PASSWORD = 'bench-passphrase-of-some-length';

/** A JSON call to the gateway that must succeed (bench/lib/load.ts apiClient). */
type Api = (method: string, path: string, body?: unknown, token?: string) => Promise<Record<string, unknown>>;

const seedRow = z.object({
  rows: z.number(), tenants: z.number(), companies: z.number(), complete: z.boolean(),
  tenant_ids: z.array(z.string()), reader_email: z.string(),
});

/** Contacts' first and last names; the bench's list filters on the last names, so their shares are known (1/8 each). */
export const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Dennis', 'Frances', 'John', 'Hedy', 'Tim', 'Anita', 'Linus'];
export const LAST_NAMES = ['Smith', 'Jones', 'Garcia', 'Miller', 'Brown', 'Davis', 'Wilson', 'Moore'];
const COUNTRIES = ['FR', 'DE', 'US', 'GB', 'ES', 'IT', 'NL', 'SE'];

/** The first row's creation time; row g of the seed (all tenants interleaved) was created g ms later. */
const EPOCH_MS = Date.UTC(2026, 0, 1);

/** The bench's schema: the seed's record and the UUID v7 of a seeded row. Owner-only, like the tables it fills. */
async function ensureBenchSchema(owner: DatabasePool): Promise<void> {
  await owner.query(sql.unsafe`CREATE SCHEMA IF NOT EXISTS bench`);
  await owner.query(sql.unsafe`
    CREATE TABLE IF NOT EXISTS bench.data_seed (
      rows int NOT NULL, tenants int NOT NULL, companies int NOT NULL, complete boolean NOT NULL,
      tenant_ids uuid[] NOT NULL, reader_email text NOT NULL, seeded_at timestamptz NOT NULL DEFAULT now()
    )`);
  // UUID v7 (RFC 9562): 48 bits of milliseconds, version 7, then bits of md5(seed) with the variant 10.
  await owner.query(sql.unsafe`
    CREATE OR REPLACE FUNCTION bench.uuid7(ms bigint, seed text) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
      SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12))::uuid
      FROM (SELECT lpad(to_hex(ms), 12, '0') AS h, md5(seed) AS r) AS parts
    $$`);
}

/** The recorded seed, or null; `complete: false` is a seed that was cut short. */
async function recordedSeed(owner: DatabasePool): Promise<(DataSeed & { complete: boolean }) | null> {
  const row = await owner.maybeOne(sql.type(seedRow)`
    SELECT rows, tenants, companies, complete, tenant_ids::text[] AS tenant_ids, reader_email FROM bench.data_seed`);
  return row && {
    rows: row.rows, tenants: row.tenants, companies: row.companies, complete: row.complete,
    tenantId: row.tenant_ids[0], tenantIds: row.tenant_ids, readerEmail: row.reader_email,
  };
}

/** The seed recorded, whatever its size (--skip-seed); it must be complete. */
export async function existingSeed(owner: DatabasePool): Promise<DataSeed> {
  await ensureBenchSchema(owner);
  const seed = await recordedSeed(owner);
  if (!seed?.complete) throw new Error('--skip-seed: no complete seed is recorded; run once without it');
  return seed;
}

/** A complete seed of `size`: the recorded one when it has this size, else a new one (the old one's records deleted first). */
export async function ensureSeed(owner: DatabasePool, api: Api, size: SeedSize): Promise<DataSeed> {
  await ensureBenchSchema(owner);
  const recorded = await recordedSeed(owner);
  if (recorded?.complete && recorded.rows === size.rows && recorded.tenants === size.tenants && recorded.companies === size.companies) {
    console.log(`reusing the seed of ${recorded.rows} contacts, ${recorded.companies} companies across ${recorded.tenants} tenants`);
    return recorded;
  }
  if (recorded) {
    console.log(`deleting the records of the previous seed (${recorded.rows} contacts across ${recorded.tenants} tenants${recorded.complete ? '' : ', cut short'})`);
    for (const tenantId of recorded.tenantIds) {
      await asTenant(owner, tenantId, sql.unsafe`DELETE FROM mod_crm.contacts WHERE tenant_id = ${tenantId}`);
      await asTenant(owner, tenantId, sql.unsafe`DELETE FROM mod_crm.companies WHERE tenant_id = ${tenantId}`);
    }
    await owner.query(sql.unsafe`DELETE FROM bench.data_seed`);
  }

  const seed = await createTenants(owner, api, size);
  await owner.query(sql.unsafe`
    INSERT INTO bench.data_seed (rows, tenants, companies, complete, tenant_ids, reader_email)
    VALUES (${size.rows}, ${size.tenants}, ${size.companies}, false, ${sql.array(seed.tenantIds, 'uuid')}, ${seed.readerEmail})`);
  await insertRecords(owner, seed);
  console.log('ANALYZE mod_crm.companies, mod_crm.contacts');
  await owner.query(sql.unsafe`ANALYZE mod_crm.companies, mod_crm.contacts`);
  await owner.query(sql.unsafe`UPDATE bench.data_seed SET complete = true`);
  return seed;
}

/** One statement as the owner in the tenant's transaction (the module tables' policies are forced on their owner too). */
async function asTenant(owner: DatabasePool, tenantId: string, statement: ReturnType<typeof sql.unsafe>): Promise<void> {
  await owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true)`);
    await tx.query(statement);
  });
}

/**
 * `size.tenants` tenants registered through the API with crm installed (four at a time: each
 * registration hashes a password), and in the first, a member holding only what the bench reads.
 */
async function createTenants(owner: DatabasePool, api: Api, size: SeedSize): Promise<DataSeed> {
  const started = performance.now();
  const tenantIds: string[] = [];
  for (let first = 0; first < size.tenants; first += 4) {
    const batch = Array.from({ length: Math.min(4, size.tenants - first) }, async () => {
      const account = await api('POST', '/auth/register', { email: `bench.data.${newId()}@example.test`, password: SEED_PASSWORD });
      await api('POST', '/modules/crm/install', undefined, String(account.accessToken));
      return (account.tenant as { id: string }).id;
    });
    tenantIds.push(...await Promise.all(batch));
    process.stdout.write(`\rtenants registered with crm installed: ${tenantIds.length}/${size.tenants}`);
  }
  console.log(` (${((performance.now() - started) / 1000).toFixed(1)} s)`);

  const [tenantId] = tenantIds;
  const reader = await api('POST', '/auth/register', { email: `bench.data.reader.${newId()}@example.test`, password: SEED_PASSWORD });
  await owner.query(sql.unsafe`
    INSERT INTO roles (id, tenant_id, name, permissions)
    VALUES (${newId()}, ${tenantId}, 'bench-crm-reader', ${sql.array(['settings.read', 'crm.contacts.read', 'crm.companies.read'], 'text')})`);
  await addMembership(owner, tenantId, (reader.user as { id: string }).id, 'bench-crm-reader');
  return { ...size, tenantId, tenantIds, readerEmail: (reader.user as { email: string }).email };
}

/**
 * Companies, then contacts in rounds: each round adds a slice of every tenant's contacts, so a
 * tenant's rows are spread over the table as concurrent tenants' writes are. Row g (all tenants
 * interleaved: g = index within the tenant × tenants + tenant) was created at EPOCH + g ms, and its
 * id is the UUID v7 of that instant; contact j of a tenant works for company j mod companies.
 */
async function insertRecords(owner: DatabasePool, seed: DataSeed): Promise<void> {
  const tenants = seed.tenantIds.length;
  const companiesPerTenant = Math.max(1, Math.floor(seed.companies / tenants));
  const contactsPerTenant = Math.floor(seed.rows / tenants);
  const companyId = (tenant: number, index: ReturnType<typeof sql.fragment>) => sql.fragment`
    bench.uuid7(${EPOCH_MS}::bigint + (${index}) * ${tenants}::int + ${tenant}::int, ${seed.tenantIds[tenant]}::text || ':company:' || (${index}))`;

  for (const [tenant, tenantId] of seed.tenantIds.entries()) {
    await asTenant(owner, tenantId, sql.unsafe`
      INSERT INTO mod_crm.companies (id, tenant_id, created_at, updated_at, name, country)
      SELECT ${companyId(tenant, sql.fragment`i`)}, ${tenantId}, ts, ts, 'Company ' || i,
        (${sql.array(COUNTRIES, 'text')})[1 + i % ${COUNTRIES.length}::int]
      FROM generate_series(0, ${companiesPerTenant - 1}::int) AS i,
        LATERAL (SELECT to_timestamp((${EPOCH_MS}::bigint + i * ${tenants}::int + ${tenant}::int) / 1000.0) AS ts) AS t`);
  }
  console.log(`companies: ${companiesPerTenant * tenants} (${companiesPerTenant} per tenant)`);

  // Contacts are created after every company: their instants start past the companies'.
  const contactsEpoch = EPOCH_MS + companiesPerTenant * tenants;
  const rounds = Math.max(1, Math.min(20, Math.ceil(contactsPerTenant / 1000)));
  const perRound = Math.ceil(contactsPerTenant / rounds);
  const started = performance.now();
  let written = 0;
  for (let round = 0; round < rounds; round += 1) {
    const from = round * perRound;
    const to = Math.min(contactsPerTenant, from + perRound) - 1;
    for (const [tenant, tenantId] of seed.tenantIds.entries()) {
      await asTenant(owner, tenantId, sql.unsafe`
        INSERT INTO mod_crm.contacts (id, tenant_id, created_at, updated_at, "firstName", "lastName", email, age, "companyId", tags)
        SELECT bench.uuid7(ms, ${tenantId}::text || ':contact:' || j), ${tenantId}, to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0),
          first, last, lower(first) || '.' || lower(last) || '.' || j || '@example.com', 18 + (j * 7) % 60,
          ${companyId(tenant, sql.fragment`j % ${companiesPerTenant}::int`)},
          CASE WHEN j % 3 = 0 THEN '["lead"]'::jsonb END
        FROM generate_series(${from}::int, ${to}::int) AS j,
          LATERAL (SELECT ${contactsEpoch}::bigint + j * ${tenants}::int + ${tenant}::int AS ms,
            (${sql.array(FIRST_NAMES, 'text')})[1 + j % ${FIRST_NAMES.length}::int] AS first,
            (${sql.array(LAST_NAMES, 'text')})[1 + (j / ${FIRST_NAMES.length}::int) % ${LAST_NAMES.length}::int] AS last) AS c`);
      written += to - from + 1;
    }
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`\rcontacts: ${written}/${contactsPerTenant * tenants}, ${(written / seconds).toFixed(0)} rows/s`);
  }
  console.log(` (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}

/** `count` ids of the tenant's live contacts, spread over the table (GET /data/crm/contacts/:id reads them in turn). */
export async function sampleContactIds(owner: DatabasePool, tenantId: string, count: number): Promise<readonly string[]> {
  return owner.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT set_config('app.tenant_id', ${tenantId}, true)`);
    return tx.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM mod_crm.contacts WHERE tenant_id = ${tenantId} AND deleted_at IS NULL ORDER BY md5(id::text) LIMIT ${count}`);
  });
}
