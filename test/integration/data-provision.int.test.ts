import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../../common/ids';
import { createDbPool, sql, type DatabasePool, type DatabaseTransactionConnection } from '../../db/pool';
import { withTenant } from '../../db/tenant';
import { ModelChangeRefused, provisionModules } from '../../services/data/provision';
import { checkManifest, type ModuleManifest } from '../../services/modules/manifest';
import { appUrl, migrateSharedDatabase, ownerUrl } from '../helpers/db';

/**
 * The data layer's tables (issue 16) on the real PostgreSQL: a scratch module with its own slug per
 * run (so crm is never touched) is provisioned, provisioned again, migrated and refused; then its
 * tables are used as the application role to prove tenant isolation by policy and by foreign key.
 */

const slug = `prov_${randomBytes(4).toString('hex')}`;
const schema = `mod_${slug}`;

type Models = Record<string, { autoApi?: boolean; fields: Record<string, unknown> }>;

const V1: Models = {
  companies: { autoApi: true, fields: { name: { type: 'text', nullable: false }, country: { type: 'text' } } },
  contacts: {
    autoApi: true,
    fields: {
      firstName: { type: 'text', nullable: false },
      age: { type: 'integer' },
      avatar: { type: 'file' },
      companyId: { type: 'uuid', references: { model: 'companies', field: 'id' } },
    },
  },
};

function manifestOf(version: string, models: Models): ModuleManifest {
  const checked = checkManifest({ slug, name: 'Provisioning test', version, models }, slug, { maxModels: 50 });
  if (!checked.ok) throw new Error(checked.problems.join('; '));
  return checked.manifest;
}

let owner: DatabasePool;
let app: DatabasePool;

const column = z.object({ table: z.string(), column: z.string(), type: z.string(), nullable: z.string() });
const text = z.object({ value: z.string() });
const registryRow = z.object({ model: z.string(), version: z.string(), appliedAt: z.string(), fields: z.unknown() });

/** Everything a run could change: columns, indexes, constraints, policies and the registry. */
async function snapshot() {
  const [columns, indexes, constraints, policies, registry] = await Promise.all([
    owner.any(sql.type(column)`
      SELECT table_name AS "table", column_name AS "column", data_type AS type, is_nullable AS nullable
      FROM information_schema.columns WHERE table_schema = ${schema} ORDER BY table_name, ordinal_position
    `),
    owner.anyFirst(sql.type(text)`SELECT indexdef AS value FROM pg_indexes WHERE schemaname = ${schema} ORDER BY indexdef`),
    owner.anyFirst(sql.type(text)`
      SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS value
      FROM pg_constraint WHERE connamespace = ${schema}::regnamespace ORDER BY 1
    `),
    owner.anyFirst(sql.type(text)`
      SELECT tablename || ' ' || policyname || ' ' || qual || ' ' || with_check AS value
      FROM pg_policies WHERE schemaname = ${schema} ORDER BY 1
    `),
    owner.any(sql.type(registryRow)`
      SELECT model, version, applied_at::text AS "appliedAt", fields FROM data_models WHERE module = ${slug} ORDER BY model
    `),
  ]);
  return { columns, indexes, constraints, policies, registry };
}

const columnsOf = (shot: Awaited<ReturnType<typeof snapshot>>, table: string) =>
  shot.columns.filter((row) => row.table === table).map(({ column: name, type, nullable }) => `${name} ${type} ${nullable}`);

beforeAll(async () => {
  await migrateSharedDatabase();
  owner = await createDbPool(ownerUrl(), { maxPoolSize: 3, name: 'data-provision-test-owner' });
  app = await createDbPool(appUrl(), { maxPoolSize: 2, name: 'data-provision-test-app' });
});

afterAll(async () => {
  await owner?.query(sql.unsafe`DROP SCHEMA IF EXISTS ${sql.identifier([schema])} CASCADE`);
  await owner?.query(sql.unsafe`DELETE FROM data_models WHERE module = ${slug}`);
  await Promise.all([owner?.end(), app?.end()]);
});

describe('provisioning a module', () => {
  it('creates the schema and a table per model, autoApi or not, with the system columns first', async () => {
    const outcomes = await provisionModules(owner, [manifestOf('1.0.0', { ...V1, audit_notes: { fields: { body: { type: 'text' } } } })]);
    expect(outcomes).toEqual([{ module: slug, version: '1.0.0', createdModels: ['companies', 'contacts', 'audit_notes'], addedFields: [], relaxedFields: [] }]);

    const shot = await snapshot();
    const system = ['id uuid NO', 'tenant_id uuid NO', 'created_at timestamp with time zone NO', 'updated_at timestamp with time zone NO',
      'deleted_at timestamp with time zone YES'];
    expect(columnsOf(shot, 'companies')).toEqual([...system, 'name text NO', 'country text YES']);
    // A file is a files-service id: a uuid column without a foreign key.
    expect(columnsOf(shot, 'contacts')).toEqual([...system, 'firstName text NO', 'age integer YES', 'avatar uuid YES', 'companyId uuid YES']);
    expect(columnsOf(shot, 'audit_notes')).toEqual([...system, 'body text YES']);
    expect(shot.registry.map(({ model, version }) => [model, version])).toEqual([['audit_notes', '1.0.0'], ['companies', '1.0.0'], ['contacts', '1.0.0']]);
  });

  it('keys, indexes and foreign keys include the tenant', async () => {
    const { indexes, constraints } = await snapshot();
    const on = (table: string, columns: string) => expect.stringContaining(`ON ${schema}.${table} USING btree (${columns})`);
    expect(indexes).toEqual(expect.arrayContaining([
      on('companies', 'id'), on('companies', 'tenant_id, id'), on('companies', 'tenant_id, created_at, id'),
      on('contacts', 'tenant_id, id'), on('contacts', 'tenant_id, created_at, id'), on('contacts', 'tenant_id, "companyId"'),
    ]));
    expect(indexes.filter((index) => index.includes(`${schema}.contacts `))).toHaveLength(4);
    expect(constraints).toContain(`${schema}.contacts FOREIGN KEY (tenant_id, "companyId") REFERENCES ${schema}.companies(tenant_id, id)`);
    expect(constraints.filter((constraint) => constraint.includes('FOREIGN KEY'))).toHaveLength(1);
  });

  it('forces row-level security with the tenant policy, and grants the application role no DELETE', async () => {
    const { policies } = await snapshot();
    expect(policies).toEqual(['audit_notes', 'companies', 'contacts'].map((table) =>
      `${table} tenant_isolation (tenant_id = current_tenant_id()) (tenant_id = current_tenant_id())`));
    const flags = await owner.any(sql.type(z.object({ table: z.string(), enabled: z.boolean(), forced: z.boolean() }))`
      SELECT relname AS "table", relrowsecurity AS enabled, relforcerowsecurity AS forced
      FROM pg_class WHERE relnamespace = ${schema}::regnamespace AND relkind = 'r' ORDER BY relname
    `);
    expect(flags).toEqual(['audit_notes', 'companies', 'contacts'].map((table) => ({ table, enabled: true, forced: true })));
    const privileges = await owner.one(sql.type(z.object({ usage: z.boolean(), select: z.boolean(), insert: z.boolean(), update: z.boolean(), remove: z.boolean() }))`
      SELECT has_schema_privilege('platform_app', ${schema}, 'USAGE') AS usage,
             has_table_privilege('platform_app', ${`${schema}.contacts`}, 'SELECT') AS select,
             has_table_privilege('platform_app', ${`${schema}.contacts`}, 'INSERT') AS insert,
             has_table_privilege('platform_app', ${`${schema}.contacts`}, 'UPDATE') AS update,
             has_table_privilege('platform_app', ${`${schema}.contacts`}, 'DELETE') AS remove
    `);
    expect(privileges).toEqual({ usage: true, select: true, insert: true, update: true, remove: false });
  });

  it('changes nothing when run again, not even the registry', async () => {
    const before = await snapshot();
    const outcomes = await provisionModules(owner, [manifestOf('1.0.0', { ...V1, audit_notes: { fields: { body: { type: 'text' } } } })]);
    expect(outcomes).toEqual([{ module: slug, version: '1.0.0', createdModels: [], addedFields: [], relaxedFields: [] }]);
    expect(await snapshot()).toEqual(before);
  });

  it('lets two runs at once take turns: one applies, the other finds nothing to do', async () => {
    const next = { ...V1, audit_notes: { fields: { body: { type: 'text' }, author: { type: 'text' } } } };
    const outcomes = await Promise.all([provisionModules(owner, [manifestOf('1.0.1', next)]), provisionModules(owner, [manifestOf('1.0.1', next)])]);
    expect(outcomes.map(([outcome]) => outcome.addedFields).sort()).toEqual([[], ['audit_notes.author']]);
  });
});

const V2: Models = {
  ...V1,
  companies: { ...V1.companies, fields: { ...V1.companies.fields, website: { type: 'text' } } },
  // Was required: relaxing it is allowed.
  contacts: { ...V1.contacts, fields: { ...V1.contacts.fields, firstName: { type: 'text' } } },
  notes: { autoApi: true, fields: { body: { type: 'text', nullable: false }, contactId: { type: 'uuid', references: { model: 'contacts', field: 'id' } } } },
  audit_notes: { fields: { body: { type: 'text' }, author: { type: 'text' } } },
};

describe('a new manifest version', () => {
  it('migrates an added field, a relaxed NOT NULL and an added model with its foreign key', async () => {
    const outcomes = await provisionModules(owner, [manifestOf('1.1.0', V2)]);
    expect(outcomes).toEqual([{
      module: slug, version: '1.1.0', createdModels: ['notes'], addedFields: ['companies.website'], relaxedFields: ['contacts.firstName'],
    }]);
    const shot = await snapshot();
    expect(columnsOf(shot, 'companies').at(-1)).toBe('website text YES');
    expect(columnsOf(shot, 'contacts')).toContain('firstName text YES');
    expect(columnsOf(shot, 'notes').slice(5)).toEqual(['body text NO', 'contactId uuid YES']);
    expect(shot.constraints).toContain(`${schema}.notes FOREIGN KEY (tenant_id, "contactId") REFERENCES ${schema}.contacts(tenant_id, id)`);
    expect(shot.indexes).toEqual(expect.arrayContaining([expect.stringContaining(`ON ${schema}.notes USING btree (tenant_id, "contactId")`)]));
    expect(shot.registry.map(({ model, version }) => [model, version])).toEqual([
      ['audit_notes', '1.0.1'], ['companies', '1.1.0'], ['contacts', '1.1.0'], ['notes', '1.1.0'],
    ]);
  });

  const withoutField = (models: Models, model: string, field: string): Models => ({
    ...models, [model]: { ...models[model], fields: Object.fromEntries(Object.entries(models[model].fields).filter(([name]) => name !== field)) },
  });
  const withField = (models: Models, model: string, field: string, definition: unknown): Models => ({
    ...models, [model]: { ...models[model], fields: { ...models[model].fields, [field]: definition } },
  });
  const { notes: _dropped, ...withoutNotes } = V2;

  it.each<[string, Models, RegExp]>([
    ['a dropped field', withoutField(V2, 'companies', 'country'), new RegExp(`module ${slug}, model companies, field country: dropped`)],
    ['a retyped field', withField(V2, 'contacts', 'age', { type: 'text' }), new RegExp(`module ${slug}, model contacts, field age: retyped from integer to text`)],
    ['a field made NOT NULL', withField(V2, 'companies', 'country', { type: 'text', nullable: false }),
      new RegExp(`module ${slug}, model companies, field country: changed to NOT NULL`)],
    ['a required field added to an existing table', withField(V2, 'companies', 'vat', { type: 'text', nullable: false }),
      new RegExp(`module ${slug}, model companies, field vat: added as required`)],
    ['a changed reference', withField(V2, 'notes', 'contactId', { type: 'uuid' }),
      new RegExp(`module ${slug}, model notes, field contactId: its reference changed from contacts.id to none`)],
    ['a dropped model', withoutNotes, new RegExp(`module ${slug}, model notes: dropped`)],
  ])('refuses %s and applies nothing, not even the allowed changes beside it', async (_what, models, reason) => {
    const before = await snapshot();
    const run = provisionModules(owner, [manifestOf('2.0.0', withField(models, 'companies', 'phone', { type: 'text' }))]);
    await expect(run).rejects.toThrow(ModelChangeRefused);
    await expect(run).rejects.toThrow(reason);
    expect(await snapshot()).toEqual(before);
  });

  it('names every refused change at once', async () => {
    const run = provisionModules(owner, [manifestOf('2.0.0', withField(withoutField(V2, 'companies', 'country'), 'contacts', 'age', { type: 'bigint' }))]);
    await expect(run).rejects.toThrow(/field country: dropped[^]*field age: retyped from integer to bigint/);
  });
});

describe('the tables as the application role', () => {
  const tenantA = newId();
  const tenantB = newId();
  const companyA = newId();
  const companyB = newId();
  const table = (name: string) => sql.identifier([schema, name]);

  const insertCompany = (tx: DatabaseTransactionConnection, tenantId: string, id: string) => tx.query(sql.unsafe`
    INSERT INTO ${table('companies')} (id, tenant_id, name) VALUES (${id}, ${tenantId}, 'Acme')
  `);
  const insertContact = (tx: DatabaseTransactionConnection, tenantId: string, companyId: string) => tx.query(sql.unsafe`
    INSERT INTO ${table('contacts')} (id, tenant_id, "firstName", "companyId") VALUES (${newId()}, ${tenantId}, 'Ada', ${companyId})
  `);
  const idsOf = (tx: DatabaseTransactionConnection, name: string) =>
    tx.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM ${table(name)} ORDER BY id`);

  beforeAll(async () => {
    await withTenant(app, tenantA, (tx) => insertCompany(tx, tenantA, companyA));
    await withTenant(app, tenantB, async (tx) => {
      await insertCompany(tx, tenantB, companyB);
      await insertContact(tx, tenantB, companyB);
    });
  });

  it("shows tenant A none of tenant B's rows, even when a query names them", async () => {
    const seen = await withTenant(app, tenantA, async (tx) => ({
      companies: await idsOf(tx, 'companies'),
      contacts: await idsOf(tx, 'contacts'),
      named: await tx.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM ${table('companies')} WHERE id = ${companyB}`),
    }));
    expect(seen).toEqual({ companies: [companyA], contacts: [], named: [] });
    expect(await withTenant(app, tenantB, (tx) => idsOf(tx, 'companies'))).toEqual([companyB]);
  });

  it("refuses a contact of tenant B pointing at tenant A's company, though the policy admits the row", async () => {
    await expect(withTenant(app, tenantB, (tx) => insertContact(tx, tenantB, companyA))).rejects.toThrow(/foreign key/);
    // The same statement with tenant B's own company passes: only the reference was wrong.
    await withTenant(app, tenantB, (tx) => insertContact(tx, tenantB, companyB));
  });

  it("refuses a row of tenant A written under tenant B's setting (the policy)", async () => {
    await expect(withTenant(app, tenantB, (tx) => insertContact(tx, tenantA, companyA))).rejects.toThrow(/row-level security policy/);
  });

  it('cannot delete a record (soft delete only)', async () => {
    await expect(withTenant(app, tenantA, (tx) => tx.query(sql.unsafe`DELETE FROM ${table('companies')} WHERE tenant_id = ${tenantA}`)))
      .rejects.toThrow(/permission denied/);
  });
});
