import { isProblem } from '../../../common/problems';
import {
  countStatement, isStatementTimeout, listStatement, recordStatement,
} from '../../../db/queries/data/read.queries';
import { StatementTimeoutError, StatementCancelledError } from 'slonik';
import { tenantSettingsStatement } from '../../../db/tenant';
import type { ReadPlan } from '../../../db/queries/data/read-plan';
import { encodeDataPageToken } from '../../../services/data/query/page-token';
import type { RawQuery } from '../../../services/data/query/parse';
import { planList, planOne } from '../../../services/data/query/plan';
import { dataCatalogue, dataModel } from '../../helpers/data-models';

/**
 * The SQL of a plan (db/queries/data/read.queries.ts), one table per rule: the statement's text and
 * its values as slonik sends them. Names are quoted identifiers of the model, every value a parameter.
 */

const TENANT = '0192f0c2-0000-7000-8000-000000000001';
const things = dataModel('lab', 'things');
const contacts = dataModel('crm', 'contacts');
const companies = dataModel('crm', 'companies');

const plan = (query: RawQuery, model = contacts) => planList(model, dataCatalogue, query, TENANT);

/** The text with slonik's placeholders numbered plainly and whitespace collapsed. */
function text(statement: { sql: string }): string {
  return statement.sql.replace(/\$slonik_(\d+)/g, '$$$1').replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
}

function where(statement: { sql: string }): string {
  return /AS "t" WHERE (.*?) ORDER BY/.exec(text(statement))![1];
}

describe('a list is one statement: the page chosen first (tenant, live rows, order, page size + 1), then shaped', () => {
  it('renders the whole statement', () => {
    const statement = listStatement(plan({ select: 'firstName,age' }));
    expect(text(statement)).toBe(
      'SELECT "t"."firstName" AS "firstName", "t"."age" AS "age", json_build_array(to_json("t"."id") #>> \'{}\') AS "$keyset"'
      + ' FROM (SELECT * FROM "mod_crm"."contacts" AS "t"'
      + ' WHERE "t"."tenant_id" = $1 AND "t"."deleted_at" IS NULL'
      + ' ORDER BY "t"."id" ASC NULLS LAST LIMIT $2) AS "t"'
      + ' ORDER BY "t"."id" ASC NULLS LAST',
    );
    expect(statement.values).toEqual([TENANT, 21]);
  });

  it('timestamps are answered as ISO 8601 UTC with milliseconds', () => {
    expect(text(listStatement(plan({ select: 'createdAt' })))).toContain(
      'to_char("t"."created_at" AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\') AS "createdAt"',
    );
  });
});

describe('conditions: every value a parameter cast to its column type', () => {
  it.each([
    [{ age: 'eq.42' }, '"t"."age" = $2::"int4"', [42]],
    [{ age: 'neq.42' }, '"t"."age" <> $2::"int4"', [42]],
    [{ age: 'gt.1' }, '"t"."age" > $2::"int4"', [1]],
    [{ age: 'lt.1' }, '"t"."age" < $2::"int4"', [1]],
    [{ age: 'gte.1' }, '"t"."age" >= $2::"int4"', [1]],
    [{ age: 'lte.1' }, '"t"."age" <= $2::"int4"', [1]],
    [{ email: 'like.*@x.io' }, '"t"."email" LIKE $2::"text"', ['%@x.io']],
    [{ email: 'ilike.a_*' }, '"t"."email" ILIKE $2::"text"', ['a\\_%']],
    [{ age: 'in.(1,2)' }, '"t"."age" = ANY($2::"int4"[])', [[1, 2]]],
    [{ companyId: 'in.(0192f0c2-aaaa-7000-8000-00000000000a)' }, '"t"."companyId" = ANY($2::"uuid"[])', [['0192f0c2-aaaa-7000-8000-00000000000a']]],
    [{ email: 'is.null' }, '"t"."email" IS NULL', []],
    [{ email: 'is.notnull' }, '"t"."email" IS NOT NULL', []],
    [{ createdAt: 'gt.2026-01-01T00:00:00Z' }, '"t"."created_at" > $2::"timestamptz"', ['2026-01-01T00:00:00Z']],
    [{ or: '(age.lt.18,age.gt.60)' }, '("t"."age" < $2::"int4" OR "t"."age" > $3::"int4")', [18, 60]],
    // not.: SQL's NOT around the condition (a NULL field matches neither gt.60 nor not.gt.60).
    [{ age: 'not.gt.60' }, 'NOT ("t"."age" > $2::"int4")', [60]],
    [{ firstName: 'not.like.A*' }, 'NOT ("t"."firstName" LIKE $2::"text")', ['A%']],
    [{ age: 'not.in.(1,2)' }, 'NOT ("t"."age" = ANY($2::"int4"[]))', [[1, 2]]],
    [{ email: 'not.is.null' }, 'NOT ("t"."email" IS NULL)', []],
    [{ or: '(age.not.lt.18,email.not.is.null)' }, '(NOT ("t"."age" < $2::"int4") OR NOT ("t"."email" IS NULL))', [18]],
    [{ or: '(age.gt.60,and(age.gt.18,email.is.null))' }, '("t"."age" > $2::"int4" OR ("t"."age" > $3::"int4" AND "t"."email" IS NULL))', [60, 18]],
  ])('%j → %s', (query, condition, values) => {
    const statement = listStatement(plan(query));
    expect(where(statement)).toBe(`"t"."tenant_id" = $1 AND ${condition} AND "t"."deleted_at" IS NULL`);
    expect(statement.values).toEqual([TENANT, ...values, 21]);
  });

  it('the types of lab.things: bigint, numeric, boolean, date, file', () => {
    const statement = listStatement(plan({ big: 'gt.9007199254740993', price: 'lt.1.5', active: 'eq.true', day: 'eq.2026-01-01', attachment: 'is.null' }, things));
    expect(where(statement)).toBe('"t"."tenant_id" = $1 AND "t"."big" > $2::"int8" AND "t"."price" < $3::"numeric" AND "t"."active" = $4::"bool"'
      + ' AND "t"."day" = $5::"date" AND "t"."attachment" IS NULL AND "t"."deleted_at" IS NULL');
    expect(statement.values).toEqual([TENANT, '9007199254740993', '1.5', true, '2026-01-01', 21]);
  });

  it('deleted_at=is.notnull replaces the live-rows condition', () => {
    expect(where(listStatement(plan({ deleted_at: 'is.notnull' })))).toBe('"t"."tenant_id" = $1 AND "t"."deleted_at" IS NOT NULL');
  });
});

describe('embeds: correlated subqueries, tenant-filtered, live rows only', () => {
  it('many-to-one is row_to_json of the one row (NULL when none)', () => {
    const statement = listStatement(plan({ select: 'firstName,companies(name)' }));
    expect(text(statement)).toContain('SELECT "t"."firstName" AS "firstName", (SELECT row_to_json(r) FROM (SELECT "e1"."name" AS "name"'
      + ' FROM "mod_crm"."companies" AS "e1" WHERE "e1"."tenant_id" = $1 AND "e1"."id" = "t"."companyId" AND "e1"."deleted_at" IS NULL) AS r) AS "companies",');
    expect(statement.values).toEqual([TENANT, TENANT, 21]);
  });

  it('one-to-many is json_agg in id order, [] when none; depth 2 correlates with its parent', () => {
    const statement = listStatement(plan({ select: 'name,contacts(firstName,companies(name))' }, companies));
    expect(text(statement)).toContain('(SELECT coalesce(json_agg(r), \'[]\'::json) FROM (SELECT "e1"."firstName" AS "firstName",'
      + ' (SELECT row_to_json(r) FROM (SELECT "e2"."name" AS "name" FROM "mod_crm"."companies" AS "e2"'
      + ' WHERE "e2"."tenant_id" = $1 AND "e2"."id" = "e1"."companyId" AND "e2"."deleted_at" IS NULL) AS r) AS "companies"'
      + ' FROM "mod_crm"."contacts" AS "e1" WHERE "e1"."tenant_id" = $2 AND "e1"."companyId" = "t"."id" AND "e1"."deleted_at" IS NULL'
      + ' ORDER BY "e1"."id") AS r) AS "contacts"');
    expect(statement.values).toEqual([TENANT, TENANT, TENANT, 21]);
  });
});

describe('keyset pagination: after the last row, for every mix of directions and NULLs', () => {
  const tokenFor = (query: RawQuery, model: typeof things, keys: (string | null)[]) =>
    ({ ...query, page_token: encodeDataPageToken(plan(query, model).queryHash, keys, 20) });
  const ID = '0192f0c2-aaaa-7000-8000-00000000000a';

  it.each([
    ['id alone', {}, [ID],
      '"t"."id" >= $2::"uuid" AND (("t"."id" > $3::"uuid"))', [ID, ID]],
    ['NOT NULL desc, then id (descending too)', { order: 'createdAt.desc' }, ['2026-01-01T00:00:00.123456+00:00', ID],
      '"t"."created_at" <= $2::"timestamptz" AND (("t"."created_at" < $3::"timestamptz") OR ("t"."created_at" = $4::"timestamptz" AND "t"."id" < $5::"uuid"))',
      ['2026-01-01T00:00:00.123456+00:00', '2026-01-01T00:00:00.123456+00:00', '2026-01-01T00:00:00.123456+00:00', ID]],
    ['nullable asc at a value: NULLs come after', { order: 'count' }, ['5', ID],
      '((("t"."count" > $2::"int4" OR "t"."count" IS NULL)) OR ("t"."count" = $3::"int4" AND "t"."id" > $4::"uuid"))', [5, 5, ID]],
    ['nullable asc at NULL: only NULLs with a greater id', { order: 'count' }, [null, ID],
      '(("t"."count" IS NULL AND "t"."id" > $2::"uuid"))', [ID]],
    ['nullable desc at a value: NULLs came first', { order: 'count.desc' }, ['5', ID],
      '(("t"."count" < $2::"int4") OR ("t"."count" = $3::"int4" AND "t"."id" < $4::"uuid"))', [5, 5, ID]],
    ['nullable desc at NULL: every value comes after', { order: 'count.desc' }, [null, ID],
      '(("t"."count" IS NOT NULL) OR ("t"."count" IS NULL AND "t"."id" < $2::"uuid"))', [ID]],
    ['mixed: NULL desc, NOT NULL asc, id', { order: 'count.desc,rank' }, [null, '7', ID],
      '(("t"."count" IS NOT NULL) OR ("t"."count" IS NULL AND "t"."rank" > $2::"int4") OR ("t"."count" IS NULL AND "t"."rank" = $3::"int4" AND "t"."id" > $4::"uuid"))',
      [7, 7, ID]],
  ])('%s', (_case, query: RawQuery, keys, predicate, values) => {
    const statement = listStatement(plan(tokenFor(query, things, keys), things));
    expect(where(statement)).toBe(`"t"."tenant_id" = $1 AND "t"."deleted_at" IS NULL AND ${predicate}`);
    expect(statement.values.slice(1, -1)).toEqual(values);
    expect(text(statement)).toMatch(/LIMIT \$\d+\) AS "t" ORDER BY/);
  });

  it('the order is the requested one, then id; no OFFSET', () => {
    const sqlText = text(listStatement(plan({ order: 'count.desc,rank' }, things)));
    expect(sqlText).toContain('ORDER BY "t"."count" DESC NULLS FIRST, "t"."rank" ASC NULLS LAST, "t"."id" ASC NULLS LAST LIMIT');
    expect(sqlText).toContain('json_build_array(to_json("t"."count") #>> \'{}\', to_json("t"."rank") #>> \'{}\', to_json("t"."id") #>> \'{}\') AS "$keyset"');
    expect(sqlText).not.toContain('OFFSET');
  });
});

describe('a list\'s plan is made once and shared by every tenant and page, its statement is each request\'s own', () => {
  const OTHER = '0192f0c2-cccc-7000-8000-00000000000c';
  const ID = '0192f0c2-aaaa-7000-8000-00000000000a';

  it('the same query of another tenant: the same text, its own tenant in every tenant position, the filters\' values kept', () => {
    // A filter whose value is a tenant id must stay the filter's value, not be taken for the tenant.
    const query = { companyId: `eq.${OTHER}`, select: 'firstName,companies(name)' };
    const mine = listStatement(planList(contacts, dataCatalogue, query, TENANT));
    const theirs = listStatement(planList(contacts, dataCatalogue, query, OTHER));
    expect(theirs.sql).toBe(mine.sql);
    expect(mine.values).toEqual([TENANT, TENANT, OTHER, 21]);
    expect(theirs.values).toEqual([OTHER, OTHER, OTHER, 21]);
    expect(where(mine)).toBe('"t"."tenant_id" = $2 AND "t"."companyId" = $3::"uuid" AND "t"."deleted_at" IS NULL');
  });

  it('page positions: each request\'s own values, and the text of its own NULLs', () => {
    const query = { order: 'count.desc,rank' };
    const hash = plan(query, things).queryHash;
    const page = (keys: (string | null)[]) => listStatement(plan({ ...query, page_token: encodeDataPageToken(hash, keys, 20) }, things));
    const [first, second, withNull] = [page(['5', '7', ID]), page(['6', '8', OTHER]), page([null, '9', ID])];
    expect(second.sql).toBe(first.sql);
    expect(first.values.slice(1, -1)).toEqual([5, 5, 7, 5, 7, ID]);
    expect(second.values.slice(1, -1)).toEqual([6, 6, 8, 6, 8, OTHER]);
    expect(withNull.sql).not.toBe(first.sql);
    expect(withNull.values.slice(1, -1)).toEqual([9, 9, ID]);
    expect(text(page(['5', '7', ID]))).toBe(text(first));
  });

  it('the plan is the same object\'s parts for every tenant, frozen, with the request\'s tenant and position', () => {
    const query = { age: 'gt.1', order: 'createdAt.desc', select: 'age' };
    const [mine, theirs] = [planList(contacts, dataCatalogue, query, TENANT), planList(contacts, dataCatalogue, { ...query }, OTHER)];
    expect([mine.tenantId, theirs.tenantId]).toEqual([TENANT, OTHER]);
    expect(theirs.conditions).toBe(mine.conditions);
    expect(Object.isFrozen(mine.conditions[0])).toBe(true);
    expect(mine.after).toBeUndefined();
    const paged = (keys: string[]) => planList(contacts, dataCatalogue, { ...query, page_token: encodeDataPageToken(mine.queryHash, keys, 20) }, OTHER);
    const [second, third] = [paged(['2026-01-01T00:00:00Z', ID]), paged(['2025-12-31T00:00:00Z', OTHER])];
    expect(third.conditions).toBe(second.conditions);
    expect([second.after, third.after]).toEqual([['2026-01-01T00:00:00Z', ID], ['2025-12-31T00:00:00Z', OTHER]]);
  });

  it('a query that failed is not kept: the same query fails again, with the same problem', () => {
    const failing = () => planList(contacts, dataCatalogue, { age: 'gt.x' }, TENANT);
    expect(failing).toThrow(expect.objectContaining({ type: 'validation-error' }));
    expect(failing).toThrow(expect.objectContaining({ type: 'validation-error' }));
  });
});

describe('one record by id', () => {
  it('names the tenant and the id, and only live records', () => {
    const statement = recordStatement(planOne(contacts, dataCatalogue, { select: 'firstName' }, TENANT), '0192f0c2-aaaa-7000-8000-00000000000a');
    expect(text(statement)).toBe('SELECT "t"."firstName" AS "firstName" FROM "mod_crm"."contacts" AS "t"'
      + ' WHERE "t"."tenant_id" = $1 AND "t"."id" = $2::uuid AND "t"."deleted_at" IS NULL');
    expect(statement.values).toEqual([TENANT, '0192f0c2-aaaa-7000-8000-00000000000a']);
    expect(statement.name).toBeUndefined();
  });

  it('prepares the default read (no select=) under a name derived from its text', () => {
    const read = (id: string) => recordStatement(planOne(contacts, dataCatalogue, {}, TENANT), id);
    const [first, second] = [read('0192f0c2-aaaa-7000-8000-00000000000a'), read('0192f0c2-bbbb-7000-8000-00000000000b')];
    expect(first.name).toMatch(/^data_one_[0-9a-f]{32}$/);
    expect(second.name).toBe(first.name);
    expect(recordStatement(planOne(companies, dataCatalogue, {}, TENANT), '0192f0c2-aaaa-7000-8000-00000000000a').name).not.toBe(first.name);
  });

  it('builds the default read once per model, then reads each tenant and id with the same text', () => {
    const OTHER = '0192f0c2-cccc-7000-8000-00000000000c';
    const mine = recordStatement(planOne(contacts, dataCatalogue, {}, TENANT), '0192f0c2-aaaa-7000-8000-00000000000a');
    const theirs = recordStatement(planOne(contacts, dataCatalogue, {}, OTHER), '0192f0c2-bbbb-7000-8000-00000000000b');
    expect(theirs.sql).toBe(mine.sql);
    expect([mine.values, theirs.values]).toEqual([
      [TENANT, '0192f0c2-aaaa-7000-8000-00000000000a'], [OTHER, '0192f0c2-bbbb-7000-8000-00000000000b'],
    ]);
    expect(text(mine)).toMatch(/WHERE "t"\."tenant_id" = \$1 AND "t"\."id" = \$2::uuid AND "t"\."deleted_at" IS NULL$/);
    // A write's read-back of a record it has just deleted: the same fields, no live-only condition, another text.
    const deleted = recordStatement({ ...planOne(contacts, dataCatalogue, {}, TENANT), conditions: [] }, '0192f0c2-aaaa-7000-8000-00000000000a');
    expect(text(deleted)).toMatch(/WHERE "t"\."tenant_id" = \$1 AND "t"\."id" = \$2::uuid$/);
    expect(deleted.name).not.toBe(mine.name);
  });
});

describe('SQL injection in every position: refused, or a parameter', () => {
  const PAYLOAD = "x'); DROP TABLE mod_crm.contacts; --";

  /** Either a 400 problem, or a statement whose text does not contain the payload (it is in the values). */
  function outcome(query: RawQuery): string {
    let planned: ReadPlan;
    try {
      planned = plan(query);
    } catch (error) {
      if (isProblem(error)) return `refused ${error.status}`;
      throw error;
    }
    const statement = listStatement(planned);
    expect(statement.sql).not.toContain('DROP TABLE');
    expect(JSON.stringify(statement.values)).toContain('DROP TABLE');
    return 'parameterized';
  }

  it.each([
    ['field name', { [`email${PAYLOAD}`]: 'eq.1' }, 'refused 400'],
    ['field name in or', { or: `(email${PAYLOAD}.eq.1)` }, 'refused 400'],
    ['operator', { email: `eq${PAYLOAD}.1` }, 'refused 400'],
    ['text value', { email: `eq.${PAYLOAD}` }, 'parameterized'],
    ['like value', { email: `like.*${PAYLOAD}*` }, 'parameterized'],
    ['in value', { email: `in.("${PAYLOAD.replace(/[()]/g, '')}")` }, 'parameterized'],
    ['or value', { or: `(email.eq."${PAYLOAD.replace(/[()]/g, '')}",age.gt.1)` }, 'parameterized'],
    ['typed value', { age: `eq.1${PAYLOAD}` }, 'refused 400'],
    ['uuid value', { companyId: `eq.${PAYLOAD}` }, 'refused 400'],
    ['order field', { order: `email${PAYLOAD}` }, 'refused 400'],
    ['order direction', { order: `email.asc${PAYLOAD}` }, 'refused 400'],
    ['select field', { select: `email,${PAYLOAD}` }, 'refused 400'],
    ['select relation', { select: `firstName,companies${PAYLOAD}(name)` }, 'refused 400'],
    ['page_size', { page_size: `1${PAYLOAD}` }, 'refused 400'],
    ['page_token (not a token)', { page_token: PAYLOAD }, 'refused 400'],
  ])('%s → %s', (_position, query: RawQuery, expected) => {
    expect(outcome(query)).toBe(expected);
  });

  it('cursor: a token carrying the payload as a text key is a parameter', () => {
    const query = { order: 'email' };
    const cursor = encodeDataPageToken(plan(query).queryHash, [PAYLOAD, '0192f0c2-aaaa-7000-8000-00000000000a'], 20);
    expect(outcome({ ...query, cursor })).toBe('parameterized');
  });

  it('cursor: the payload as a typed key is refused', () => {
    const query = { order: 'age' };
    const cursor = encodeDataPageToken(plan(query).queryHash, [PAYLOAD, '0192f0c2-aaaa-7000-8000-00000000000a'], 20);
    expect(outcome({ ...query, cursor })).toBe('refused 400');
  });

  it('identifiers are quoted by slonik even if a name held a quote', () => {
    const statement = listStatement({
      ...plan({ select: 'firstName' }), fields: [{ name: 'a"b', column: 'c"d', type: 'text' }],
    });
    expect(text(statement)).toContain('"t"."c""d" AS "a""b"');
  });
});

describe('Prefer: count=exact: the total in the page\'s own statement, ignoring the page position', () => {
  const count = '(SELECT count(*) FROM "mod_crm"."contacts" AS "c" WHERE "c"."tenant_id" = $1 AND "c"."age" > $2::"int4" AND "c"."deleted_at" IS NULL) AS "$count"';

  it('a column of every row, with the filters and not the keyset', () => {
    const first = plan({ age: 'gt.1', select: 'age' });
    const after = { ...first, after: ['0192f0c2-aaaa-7000-8000-00000000000a'] };
    const statement = listStatement(after, { count: true });
    expect(text(statement)).toContain(`json_build_array(to_json("t"."id") #>> '{}') AS "$keyset", ${count} FROM (SELECT * FROM "mod_crm"."contacts" AS "t"`);
    // The count's values come first (the select list), then the page's: tenant, filter, keyset, limit.
    expect(statement.values).toEqual([TENANT, 1, TENANT, 1, after.after[0], after.after[0], 21]);
  });

  it('without the preference nothing is counted', () => {
    expect(text(listStatement(plan({ age: 'gt.1' })))).not.toContain('count(');
  });

  it('the total alone, for an empty later page', () => {
    expect(text(countStatement(plan({ age: 'gt.1' })))).toBe(
      'SELECT (SELECT count(*) FROM "mod_crm"."contacts" AS "c" WHERE "c"."tenant_id" = $1 AND "c"."age" > $2::"int4" AND "c"."deleted_at" IS NULL) AS count',
    );
  });
});

describe('the query budget', () => {
  it('is SET LOCAL statement_timeout: set_config(…, true), transaction-local, in the statement that sets the tenant', () => {
    const statement = tenantSettingsStatement(TENANT, { statementTimeoutMs: 250 });
    expect(text(statement)).toBe("SELECT set_config('app.tenant_id', $1, true), set_config('statement_timeout', $2, true)");
    expect(statement.values).toEqual([TENANT, '250ms']);
    expect(text(tenantSettingsStatement(TENANT))).toBe("SELECT set_config('app.tenant_id', $1, true)");
  });

  it('a list read down its order\'s index discourages sorts in the same statement, transaction-local', () => {
    expect(text(tenantSettingsStatement(TENANT, { statementTimeoutMs: 250, discourageSorts: true }))).toBe(
      "SELECT set_config('app.tenant_id', $1, true), set_config('statement_timeout', $2, true), set_config('enable_sort', 'off', true)",
    );
  });

  it('a statement_timeout cancellation is told from a cancel request', () => {
    const timeout = new StatementTimeoutError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    const cancelled = new StatementCancelledError(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
    expect(isStatementTimeout(timeout)).toBe(true);
    expect(isStatementTimeout(cancelled)).toBe(false);
    expect(isStatementTimeout(new Error('x'))).toBe(false);
  });
});
