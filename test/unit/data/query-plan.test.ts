import { encodePageToken } from '../../../common/pagination';
import { isProblem } from '../../../common/problems';
import { encodeDataPageToken } from '../../../services/data/query/page-token';
import type { RawQuery } from '../../../services/data/query/parse';
import { embeddedModels, planList, planOne } from '../../../services/data/query/plan';
import { dataCatalogue, dataModel } from '../../helpers/data-models';

/**
 * The plan of a request (services/data/query/plan.ts), one table per rule: names resolved against
 * the model, values typed per field type, limits, select/embeds, order and page tokens.
 */

const TENANT = '0192f0c2-0000-7000-8000-000000000001';
const things = dataModel('lab', 'things');
const contacts = dataModel('crm', 'contacts');
const companies = dataModel('crm', 'companies');

const plan = (query: RawQuery, model = things) => planList(model, dataCatalogue, query, TENANT);
const LIVE = { kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: true };
const ID_ASC = { column: 'id', type: 'uuid', direction: 'asc', nullable: false };
/** After a descending key, the tie-breaker descends too (an index read backwards serves both). */
const ID_DESC = { ...ID_ASC, direction: 'desc' };

function problemOf(work: () => unknown): { type: string; status: number; errors?: { field: string; code: string }[] } {
  try {
    work();
  } catch (error) {
    if (!isProblem(error)) throw error;
    const errors = error.extensions.errors?.map(({ field, code }) => ({ field, code }));
    return { type: error.type, status: error.status, ...(errors ? { errors } : {}) };
  }
  throw new Error('planned without a problem');
}

const invalid = (field: string, code: string) => ({ type: 'validation-error', status: 400, errors: [{ field, code }] });

describe('not.: the leaf condition wrapped in a not, typed as without it', () => {
  it.each([
    [{ count: 'not.gt.60' }, { kind: 'compare', target: { column: 'count', type: 'integer' }, operator: 'gt', value: 60 }],
    [{ label: 'not.like.A*' }, { kind: 'compare', target: { column: 'label', type: 'text' }, operator: 'like', value: 'A%' }],
    [{ count: 'not.in.(1,2)' }, { kind: 'in', target: { column: 'count', type: 'integer' }, values: [1, 2] }],
    [{ note: 'not.is.null' }, { kind: 'null', target: { column: 'note', type: 'text' }, isNull: true }],
    [{ doc: 'not.is.notnull' }, { kind: 'null', target: { column: 'doc', type: 'jsonb' }, isNull: false }],
  ])('%j', (query, condition) => {
    expect(plan(query).conditions).toEqual([{ kind: 'not', condition }, LIVE]);
  });

  it('a not. value is checked like any other; jsonb still takes only is', () => {
    expect(problemOf(() => plan({ count: 'not.eq.abc' }))).toEqual(invalid('count', 'INVALID_TYPE'));
    expect(problemOf(() => plan({ doc: 'not.eq.1' }))).toEqual(invalid('doc', 'INVALID_OPERATOR'));
    expect(problemOf(() => plan({ count: 'not.like.1' }))).toEqual(invalid('count', 'INVALID_OPERATOR'));
  });

  it('deleted_at=not.is.null replaces the live-rows condition, as is.notnull does', () => {
    expect(plan({ deleted_at: 'not.is.null' }).conditions).toEqual([
      { kind: 'not', condition: { kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: true } },
    ]);
  });
});

describe('values are typed per field type', () => {
  it.each([
    [{ label: 'eq.x' }, { column: 'label', type: 'text' }, 'eq', 'x'],
    [{ count: 'eq.42' }, { column: 'count', type: 'integer' }, 'eq', 42],
    [{ count: 'gt.-7' }, { column: 'count', type: 'integer' }, 'gt', -7],
    [{ big: 'gt.9007199254740993' }, { column: 'big', type: 'bigint' }, 'gt', '9007199254740993'],
    [{ price: 'lte.12.50' }, { column: 'price', type: 'numeric' }, 'lte', '12.50'],
    [{ active: 'eq.true' }, { column: 'active', type: 'boolean' }, 'eq', true],
    [{ active: 'neq.false' }, { column: 'active', type: 'boolean' }, 'neq', false],
    [{ ref: 'eq.0192F0C2-AAAA-7000-8000-00000000000A' }, { column: 'ref', type: 'uuid' }, 'eq', '0192f0c2-aaaa-7000-8000-00000000000a'],
    [{ attachment: 'eq.0192f0c2-aaaa-7000-8000-00000000000b' }, { column: 'attachment', type: 'file' }, 'eq', '0192f0c2-aaaa-7000-8000-00000000000b'],
    [{ seenAt: 'gte.2026-01-31T12:00:00.123456+02:00' }, { column: 'seenAt', type: 'timestamptz' }, 'gte', '2026-01-31T12:00:00.123456+02:00'],
    [{ day: 'lt.2024-02-29' }, { column: 'day', type: 'date' }, 'lt', '2024-02-29'],
    [{ createdAt: 'gt.2026-01-01T00:00:00Z' }, { column: 'created_at', type: 'timestamptz' }, 'gt', '2026-01-01T00:00:00Z'],
    // like/ilike: `*` and `%` are the wildcard (PostgREST's, whose clients send `%`); _ and \ match themselves.
    [{ label: 'like.a*b%c_d\\' }, { column: 'label', type: 'text' }, 'like', 'a%b%c\\_d\\\\'],
    [{ note: 'ilike.*x*' }, { column: 'note', type: 'text' }, 'ilike', '%x%'],
    [{ note: 'ilike.%x%' }, { column: 'note', type: 'text' }, 'ilike', '%x%'],
    [{ label: 'like.%@x.io' }, { column: 'label', type: 'text' }, 'like', '%@x.io'],
  ])('%j', (query, target, operator, value) => {
    expect(plan(query).conditions).toEqual([{ kind: 'compare', target, operator, value }, LIVE]);
  });

  it.each([
    [{ count: 'in.(1,2,3)' }, { column: 'count', type: 'integer' }, [1, 2, 3]],
    [{ label: 'in.(a,"b,c")' }, { column: 'label', type: 'text' }, ['a', 'b,c']],
    [{ id: 'in.()' }, { column: 'id', type: 'uuid' }, []],
  ])('%j', (query, target, values) => {
    expect(plan(query).conditions).toEqual([{ kind: 'in', target, values }, LIVE]);
  });

  it.each([
    [{ count: 'eq.abc' }, 'count', 'INVALID_TYPE'],
    [{ count: 'eq.1e3' }, 'count', 'INVALID_TYPE'],
    [{ count: 'eq.1.5' }, 'count', 'INVALID_TYPE'],
    [{ count: 'eq.3000000000' }, 'count', 'OUT_OF_RANGE'],
    [{ count: 'eq.99999999999999999999999' }, 'count', 'INVALID_TYPE'],
    [{ count: "eq.1 OR 1=1" }, 'count', 'INVALID_TYPE'],
    [{ big: 'eq.1.5' }, 'big', 'INVALID_FORMAT'],
    [{ big: 'eq.9223372036854775808' }, 'big', 'OUT_OF_RANGE'],
    [{ price: 'eq.NaN' }, 'price', 'INVALID_FORMAT'],
    [{ price: 'eq.1;SELECT 1' }, 'price', 'INVALID_FORMAT'],
    [{ active: 'eq.yes' }, 'active', 'INVALID_TYPE'],
    [{ ref: "eq.'; DROP TABLE mod_lab.things; --" }, 'ref', 'INVALID_FORMAT'],
    [{ attachment: 'eq.42' }, 'attachment', 'INVALID_FORMAT'],
    [{ seenAt: 'eq.2026-02-30T00:00:00Z' }, 'seenAt', 'INVALID_FORMAT'],
    [{ seenAt: 'eq.2026-01-01' }, 'seenAt', 'INVALID_FORMAT'],
    [{ seenAt: 'eq.infinity' }, 'seenAt', 'INVALID_FORMAT'],
    [{ day: 'eq.2026-13-01' }, 'day', 'INVALID_FORMAT'],
    [{ day: 'eq.0000-01-01' }, 'day', 'INVALID_FORMAT'],
    [{ count: 'in.(1,x)' }, 'count', 'INVALID_TYPE'],
    [{ or: '(count.eq.x,label.eq.y)' }, 'or', 'INVALID_TYPE'],
  ])('%j → 400 naming %s', (query, field, code) => {
    expect(problemOf(() => plan(query))).toEqual(invalid(field, code));
  });
});

describe('operators apply to the field types they make sense for', () => {
  it.each([
    [{ count: 'like.1*' }, 'count'],
    [{ seenAt: 'ilike.2026*' }, 'seenAt'],
    [{ doc: 'eq.{}' }, 'doc'],
    [{ doc: 'in.(1)' }, 'doc'],
  ])('%j → 400 INVALID_OPERATOR', (query, field) => {
    expect(problemOf(() => plan(query))).toEqual(invalid(field, 'INVALID_OPERATOR'));
  });

  it('is.null applies to every field, jsonb included', () => {
    expect(plan({ doc: 'is.notnull' }).conditions).toEqual([{ kind: 'null', target: { column: 'doc', type: 'jsonb' }, isNull: false }, LIVE]);
  });
});

describe('names must be fields of the model', () => {
  it.each([
    [{ nope: 'eq.1' }, 'nope'],
    [{ 'name"; DROP TABLE x; --': 'eq.1' }, 'name"; DROP TABLE x; --'],
    [{ tenant_id: 'eq.0192f0c2-0000-7000-8000-000000000002' }, 'tenant_id'],
    [{ created_at: 'gt.2026-01-01T00:00:00Z' }, 'created_at'],
    [{ 'label)': 'eq.1' }, 'label)'],
    [{ or: '(nope.eq.1)' }, 'or'],
    [{ order: 'nope.desc' }, 'order'],
    [{ order: 'created_at' }, 'order'],
    [{ select: 'label,nope' }, 'select'],
    [{ select: 'deleted_at' }, 'select'],
  ])('%j → 400 UNKNOWN_FIELD naming %s', (query, field) => {
    expect(problemOf(() => plan(query))).toEqual(invalid(field, 'UNKNOWN_FIELD'));
  });

  it('an embedded model\'s fields are checked against that model', () => {
    expect(problemOf(() => plan({ select: 'firstName,companies(nope)' }, contacts))).toEqual(invalid('select', 'UNKNOWN_FIELD'));
  });
});

describe('at most 10 filters, counted inside or/and groups too', () => {
  const ten: RawQuery = { count: Array.from({ length: 5 }, (_, i) => `gt.${i}`), label: Array.from({ length: 5 }, (_, i) => `neq.${i}`) };

  it('10 are planned', () => {
    expect(plan(ten).conditions).toHaveLength(11);
  });

  it.each([
    [{ ...ten, note: 'eq.x' }, 11],
    [{ count: Array.from({ length: 9 }, (_, i) => `gt.${i}`), or: '(label.eq.a,label.eq.b)' }, 11],
    [{ or: `(${Array.from({ length: 6 }, () => 'label.eq.a').join(',')},and(${Array.from({ length: 6 }, () => 'count.eq.1').join(',')}))` }, 12],
  ])('%# → 400 filter-limit-exceeded', (query, given) => {
    const problem = (() => {
      try {
        plan(query);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(problem).toMatchObject({ type: 'filter-limit-exceeded', status: 400, extensions: { max: 10, given } });
  });
});

describe('soft-deleted records: deleted_at (or deletedAt) replaces the default', () => {
  it.each([
    [{}, [LIVE]],
    [{ deleted_at: 'is.notnull' }, [{ kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: false }]],
    [{ deletedAt: 'is.notnull' }, [{ kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: false }]],
    [{ deleted_at: 'gt.2026-01-01T00:00:00Z' }, [{ kind: 'compare', target: { column: 'deleted_at', type: 'timestamptz' }, operator: 'gt', value: '2026-01-01T00:00:00Z' }]],
    [{ or: '(deleted_at.is.null,count.gt.1)' }, [{
      kind: 'or', conditions: [
        { kind: 'null', target: { column: 'deleted_at', type: 'timestamptz' }, isNull: true },
        { kind: 'compare', target: { column: 'count', type: 'integer' }, operator: 'gt', value: 1 },
      ],
    }]],
  ])('%j', (query, conditions) => {
    expect(plan(query).conditions).toEqual(conditions);
  });
});

describe('select= and embeds', () => {
  it('without select, every field and no embeds', () => {
    const { fields, embeds } = plan({}, contacts);
    expect(fields.map((field) => field.name)).toEqual(['id', 'tenantId', 'createdAt', 'updatedAt', 'deletedAt', 'firstName', 'lastName', 'email', 'age', 'companyId', 'tags']);
    expect(fields[2]).toEqual({ name: 'createdAt', column: 'created_at', type: 'timestamptz' });
    expect(embeds).toEqual([]);
  });

  it('many-to-one embeds an object of the target model', () => {
    expect(plan({ select: 'firstName,companies(name)' }, contacts)).toMatchObject({
      fields: [{ name: 'firstName', column: 'firstName', type: 'text' }],
      embeds: [{
        name: 'companies', cardinality: 'one', schema: 'mod_crm', table: 'companies', localColumn: 'companyId', remoteColumn: 'id',
        fields: [{ name: 'name', column: 'name', type: 'text' }], embeds: [],
      }],
    });
  });

  it('one-to-many embeds an array, and embeds nest to depth 2', () => {
    expect(plan({ select: 'name,contacts(firstName,companies(name))' }, companies).embeds).toEqual([{
      name: 'contacts', cardinality: 'many', schema: 'mod_crm', table: 'contacts', localColumn: 'id', remoteColumn: 'companyId',
      fields: [{ name: 'firstName', column: 'firstName', type: 'text' }],
      embeds: [{
        name: 'companies', cardinality: 'one', schema: 'mod_crm', table: 'companies', localColumn: 'companyId', remoteColumn: 'id',
        fields: [{ name: 'name', column: 'name', type: 'text' }], embeds: [],
      }],
    }]);
  });

  it('* and a named field are one field; the select may be embeds only', () => {
    expect(plan({ select: '*,label' }).fields).toHaveLength(things.fields.length);
    expect(plan({ select: 'owners(name)' }).fields).toEqual([]);
  });

  it.each([
    [{ select: 'firstName,owners(name)' }, contacts, 'UNKNOWN_RELATION'],
    [{ select: 'firstName,lastName(x)' }, contacts, 'UNKNOWN_RELATION'],
    // secrets references things, but the API does not serve it (autoApi false).
    [{ select: 'label,secrets(*)' }, things, 'UNKNOWN_RELATION'],
    [{ select: 'firstName,companies(name),companies(country)' }, contacts, 'DUPLICATE_VALUE'],
  ])('%j → 400 %s', (query, model, code) => {
    expect(problemOf(() => plan(query, model))).toEqual(invalid('select', code));
  });

  it('a third level is 400 relations-depth-exceeded', () => {
    expect(problemOf(() => plan({ select: 'name,contacts(companies(contacts(firstName)))' }, companies)))
      .toEqual({ type: 'relations-depth-exceeded', status: 400 });
  });

  it('embeddedModels lists the models a plan reads besides its own (their read permission)', () => {
    expect(embeddedModels(plan({ select: 'name,contacts(firstName,companies(name))' }, companies))).toEqual(['contacts', 'companies']);
  });
});

describe('order= ends with id, the tie-breaker', () => {
  it.each([
    [{}, [ID_ASC]],
    [{ order: 'count.desc' }, [{ column: 'count', type: 'integer', direction: 'desc', nullable: true }, ID_DESC]],
    [{ order: 'rank,seenAt.desc' }, [
      { column: 'rank', type: 'integer', direction: 'asc', nullable: false },
      { column: 'seenAt', type: 'timestamptz', direction: 'desc', nullable: true }, ID_DESC,
    ]],
    [{ order: 'id.desc' }, [ID_DESC]],
    [{ order: 'createdAt.desc' }, [{ column: 'created_at', type: 'timestamptz', direction: 'desc', nullable: false }, ID_DESC]],
  ])('%j', (query, order) => {
    expect(plan(query).order).toEqual(order);
  });

  it.each([
    [{ order: 'doc' }, 'INVALID_VALUE'],
    [{ order: 'count,count.desc' }, 'DUPLICATE_VALUE'],
  ])('%j → 400 %s', (query, code) => {
    expect(problemOf(() => plan(query))).toEqual(invalid('order', code));
  });
});

describe('a page is read down its order\'s index when no other plan reads fewer rows (readsOrderIndex)', () => {
  it.each([
    ['no order: id, the (tenant_id, id) index', {}],
    ['createdAt descending: (tenant_id, created_at, id) read backwards', { order: 'createdAt.desc' }],
    ['id descending', { order: 'id.desc' }],
    ['the bench\'s list: LIKE, IN and a range, newest first, a many-to-one embed', {
      age: 'gte.30', lastName: 'in.(Smith,Jones)', email: 'like.*@example.com', order: 'createdAt.desc', select: 'id,email,companies(name)',
    }],
    ['filters inside or= on columns without an index of their own', { or: '(email.ilike.*x*,age.lt.20)', order: 'createdAt' }],
    ['createdAt bounding a walk of its own index', { createdAt: 'gte.2026-11-01T00:00:00Z', order: 'createdAt.desc' }],
    ['id bounding a walk of its own index', { id: 'gt.0192f0c2-aaaa-7000-8000-00000000000a' }],
  ])('%s', (_name, query) => {
    expect(plan(query, contacts).readsOrderIndex).toBe(true);
  });

  it.each([
    ['an order no index serves', { order: 'lastName' }],
    ['createdAt ascending, id descending (one index, two directions)', { order: 'createdAt.asc,id.desc' }],
    ['a filter on a reference, which has an index of its own', { companyId: 'eq.0192f0c2-aaaa-7000-8000-00000000000a' }],
    ['the reference inside or=', { or: '(companyId.is.null,age.lt.20)' }],
    ['a filter on id, ordered by createdAt', { id: 'in.(0192f0c2-aaaa-7000-8000-00000000000a)', order: 'createdAt.desc' }],
    ['a filter on createdAt, ordered by id (the newest rows are the last of the id walk)', { createdAt: 'gte.2026-11-01T00:00:00Z' }],
  ])('not with %s', (_name, query) => {
    expect(plan(query, contacts).readsOrderIndex).toBe(false);
  });

  it('not with a one-to-many embed, at any depth: its arrays are sorted by id', () => {
    expect(plan({ select: 'name,contacts(firstName)' }, companies).readsOrderIndex).toBe(false);
    expect(plan({ select: 'email,companies(name,contacts(firstName))' }, contacts).readsOrderIndex).toBe(false);
    expect(plan({ select: 'name' }, companies).readsOrderIndex).toBe(true);
  });
});

describe('page size: default 20, at most 100', () => {
  it.each([
    [{}, 20], [{ page_size: '1' }, 1], [{ page_size: '100' }, 100], [{ limit: '7' }, 7],
  ])('%j → %d', (query, size) => {
    expect(plan(query).pageSize).toBe(size);
  });

  it.each([
    [{ page_size: '101' }, 'page_size'], [{ page_size: '0' }, 'page_size'], [{ limit: '1000' }, 'limit'],
  ])('%j → 400 naming %s', (query, field) => {
    expect(problemOf(() => plan(query))).toEqual(invalid(field, 'OUT_OF_RANGE'));
  });
});

describe('page tokens are bound to their query', () => {
  const query = { count: 'gt.1', order: 'seenAt.desc,rank', select: 'label' };
  const first = plan(query);
  const token = encodeDataPageToken(first.queryHash, ['2026-01-31T12:00:00.123456+00:00', '7', '0192f0c2-aaaa-7000-8000-00000000000a'], 20);
  const ID = '0192f0c2-aaaa-7000-8000-00000000000a';

  it('the keys of a token are typed like filter values', () => {
    expect(plan({ ...query, page_token: token }).after).toEqual(['2026-01-31T12:00:00.123456+00:00', 7, '0192f0c2-aaaa-7000-8000-00000000000a']);
    expect(plan({ ...query, limit: '5', cursor: token }).after).toHaveLength(3);
  });

  it('another page size keeps the query: the token still applies', () => {
    expect(plan({ ...query, page_size: '50', page_token: token }).pageSize).toBe(50);
  });

  it('the page starts at the row offset its token carries; a first page at 0 (Content-Range)', () => {
    expect(plan(query).pageStart).toBe(0);
    expect(plan({ ...query, offset: '0' }).pageStart).toBe(0);
    expect(plan({ ...query, page_token: token }).pageStart).toBe(20);
    expect(plan({ ...query, limit: '5', cursor: encodeDataPageToken(first.queryHash, ['2026-01-31T12:00:00Z', '7', ID], 45) }).pageStart).toBe(45);
  });

  it('another page size keeps the offset the token carries (the rows before were counted as they came)', () => {
    expect(plan({ ...query, page_size: '50', page_token: token })).toMatchObject({ pageStart: 20, pageSize: 50 });
  });

  it('a NULL key of a nullable column is a position', () => {
    const nulls = encodeDataPageToken(first.queryHash, [null, '7', '0192f0c2-aaaa-7000-8000-00000000000a'], 20);
    expect(plan({ ...query, page_token: nulls }).after).toEqual([null, 7, '0192f0c2-aaaa-7000-8000-00000000000a']);
  });

  it.each([
    ['other filters', { ...query, count: 'gt.2', page_token: token }, 'page_token'],
    ['one filter more', { ...query, label: 'eq.x', page_token: token }, 'page_token'],
    ['another order', { ...query, order: 'seenAt.asc,rank', page_token: token }, 'page_token'],
    ['another select', { ...query, select: 'label,note', page_token: token }, 'page_token'],
    ['another model', { age: 'gt.1', order: 'createdAt.desc,age', select: 'email', page_token: token }, 'page_token', contacts],
    ['as cursor', { ...query, count: 'gt.2', cursor: token }, 'cursor'],
    ['not base64 JSON', { ...query, page_token: 'bm90IGpzb24' }, 'page_token'],
    ['garbage', { ...query, page_token: "'; DROP TABLE x; --" }, 'page_token'],
    ['too few keys', { ...query, page_token: encodeDataPageToken(first.queryHash, ['7'], 20) }, 'page_token'],
    ['a key of the wrong type', { ...query, page_token: encodeDataPageToken(first.queryHash, ['2026-01-31T12:00:00Z', "7 OR 1=1", '0192f0c2-aaaa-7000-8000-00000000000a'], 20) }, 'page_token'],
    ['a timestamp that is none', { ...query, page_token: encodeDataPageToken(first.queryHash, ["now()'--", '7', '0192f0c2-aaaa-7000-8000-00000000000a'], 20) }, 'page_token'],
    ['NULL for a NOT NULL key', { ...query, page_token: encodeDataPageToken(first.queryHash, ['2026-01-31T12:00:00Z', null, '0192f0c2-aaaa-7000-8000-00000000000a'], 20) }, 'page_token'],
  ])('%s → 400 naming %s', (_case, replay: RawQuery, field, model = things) => {
    const problem = problemOf(() => plan(replay, model));
    expect(problem.type).toBe('validation-error');
    expect(problem.errors?.[0].field).toBe(field);
  });

  it.each([
    ['0 (a later page never starts the list)', 0], ['negative', -1], ['a fraction', 2.5], ['text', '20x'], ['null', null], ['left out', undefined],
  ])('a row offset %s → 400 naming page_token', (_case, start) => {
    const forged = encodePageToken({ q: first.queryHash, k: ['2026-01-31T12:00:00Z', '7', ID], s: start });
    expect(problemOf(() => plan({ ...query, page_token: forged }))).toEqual(invalid('page_token', 'INVALID_FORMAT'));
  });
});

describe('planOne: GET one record with select=', () => {
  it('plans the live record with the select', () => {
    expect(planOne(contacts, dataCatalogue, { select: 'firstName,companies(name)' }, TENANT)).toMatchObject({
      schema: 'mod_crm', table: 'contacts', tenantId: TENANT, conditions: [LIVE], order: [ID_ASC],
      fields: [{ name: 'firstName' }], embeds: [{ name: 'companies', cardinality: 'one' }],
    });
    expect(planOne(contacts, dataCatalogue, {}, TENANT).fields).toHaveLength(contacts.fields.length);
  });

  it.each([[{ age: 'gt.1' }, 'age'], [{ page_size: '5' }, 'page_size'], [{ order: 'age' }, 'order']])('%j → 400 naming %s', (query, field) => {
    expect(problemOf(() => planOne(contacts, dataCatalogue, query, TENANT))).toEqual(invalid(field, 'UNKNOWN_FIELD'));
  });
});
