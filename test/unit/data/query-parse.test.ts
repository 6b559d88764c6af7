import { isProblem } from '../../../common/problems';
import { pageTokenOf, parseListQuery, type RawQuery } from '../../../services/data/query/parse';

/**
 * The grammar of the query language (services/data/query/parse.ts), one table per rule: the query
 * string → its syntax tree, or → the problem, naming the parameter.
 */

function problemOf(query: RawQuery): { type: string; status: number; errors?: { field: string; code: string }[] } {
  try {
    parseListQuery(query);
  } catch (error) {
    if (!isProblem(error)) throw error;
    const errors = error.extensions.errors?.map(({ field, code }) => ({ field, code }));
    return { type: error.type, status: error.status, ...(errors ? { errors } : {}) };
  }
  throw new Error('parsed without a problem');
}

const page = { sizeParameter: 'page_size', tokenParameter: 'page_token' };

describe('field=operator.value', () => {
  it.each([
    [{ age: 'eq.42' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'eq', value: '42' }],
    [{ age: 'neq.42' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'neq', value: '42' }],
    [{ age: 'gt.1' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'gt', value: '1' }],
    [{ age: 'lt.1' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'lt', value: '1' }],
    [{ age: 'gte.1' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'gte', value: '1' }],
    [{ age: 'lte.1' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'lte', value: '1' }],
    [{ email: 'like.*@x.io' }, { kind: 'compare', parameter: 'email', field: 'email', operator: 'like', value: '*@x.io' }],
    [{ email: 'ilike.A*' }, { kind: 'compare', parameter: 'email', field: 'email', operator: 'ilike', value: 'A*' }],
    // Everything after the first dot is the value, dots and quotes included (top level is literal).
    [{ email: 'eq.a.b@c.d' }, { kind: 'compare', parameter: 'email', field: 'email', operator: 'eq', value: 'a.b@c.d' }],
    [{ name: 'eq."q"' }, { kind: 'compare', parameter: 'name', field: 'name', operator: 'eq', value: '"q"' }],
    [{ name: 'eq.' }, { kind: 'compare', parameter: 'name', field: 'name', operator: 'eq', value: '' }],
    [{ name: "eq.x' OR 1=1 --" }, { kind: 'compare', parameter: 'name', field: 'name', operator: 'eq', value: "x' OR 1=1 --" }],
  ])('%j → %j', (query, filter) => {
    expect(parseListQuery(query)).toEqual({ filters: [filter], page });
  });

  it('a parameter without a name (?=x) is 400 naming the query, never an empty field (found by the API fuzzer)', () => {
    expect(problemOf({ '': ['x', 'eq.1'] }).errors).toEqual([{ field: 'query', code: 'UNKNOWN_FIELD' }]);
  });

  it('a repeated parameter is one filter per value, ANDed', () => {
    expect(parseListQuery({ age: ['gt.1', 'lt.9'] }).filters).toEqual([
      { kind: 'compare', parameter: 'age', field: 'age', operator: 'gt', value: '1' },
      { kind: 'compare', parameter: 'age', field: 'age', operator: 'lt', value: '9' },
    ]);
  });

  it.each([
    [{ age: '42' }, 'age', 'INVALID_FORMAT'],
    [{ age: 'between.1' }, 'age', 'UNKNOWN_OPERATOR'],
    [{ age: 'EQ.1' }, 'age', 'UNKNOWN_OPERATOR'],
    [{ age: 'not.not.eq.1' }, 'age', 'UNKNOWN_OPERATOR'],
    [{ age: 'not.' }, 'age', 'INVALID_FORMAT'],
    [{ age: 'not.between.1' }, 'age', 'UNKNOWN_OPERATOR'],
    [{ age: "eq;DROP TABLE x.1" }, 'age', 'UNKNOWN_OPERATOR'],
    [{ age: "=1 OR 1=1--.1" }, 'age', 'UNKNOWN_OPERATOR'],
  ])('%j → 400 naming %s (%s)', (query, field, code) => {
    expect(problemOf(query)).toEqual({ type: 'validation-error', status: 400, errors: [{ field, code }] });
  });
});

describe('not.: every operator negated (PostgREST)', () => {
  it.each([
    [{ age: 'not.gt.60' }, { kind: 'compare', parameter: 'age', field: 'age', operator: 'gt', value: '60', negated: true }],
    [{ name: 'not.like.A*' }, { kind: 'compare', parameter: 'name', field: 'name', operator: 'like', value: 'A*', negated: true }],
    [{ name: 'not.eq.not.x' }, { kind: 'compare', parameter: 'name', field: 'name', operator: 'eq', value: 'not.x', negated: true }],
    [{ x: 'not.in.(a,b)' }, { kind: 'in', parameter: 'x', field: 'x', values: ['a', 'b'], negated: true }],
    [{ email: 'not.is.null' }, { kind: 'is', parameter: 'email', field: 'email', isNull: true, negated: true }],
  ])('%j → %j', (query, filter) => {
    expect(parseListQuery(query)).toEqual({ filters: [filter], page });
  });

  it('inside or/and groups too', () => {
    expect(parseListQuery({ or: '(age.not.lt.18,and(email.not.is.null,name.not.in.("a,b")))' }).filters).toEqual([{
      kind: 'or', parameter: 'or', conditions: [
        { kind: 'compare', parameter: 'or', field: 'age', operator: 'lt', value: '18', negated: true },
        { kind: 'and', parameter: 'or', conditions: [
          { kind: 'is', parameter: 'or', field: 'email', isNull: true, negated: true },
          { kind: 'in', parameter: 'or', field: 'name', values: ['a,b'], negated: true },
        ] },
      ],
    }]);
  });
});

describe('in.(list)', () => {
  it.each([
    ['in.(1,2,3)', ['1', '2', '3']],
    ['in.(a,b,"c,d")', ['a', 'b', 'c,d']],
    ['in.("a(b)","x\\"y",z)', ['a(b)', 'x"y', 'z']],
    ['in.("")', ['']],
    ['in.()', []],
    ["in.(';DROP TABLE t;--)", ["';DROP TABLE t;--"]],
  ])('%s → %j', (text, values) => {
    expect(parseListQuery({ name: text }).filters).toEqual([{ kind: 'in', parameter: 'name', field: 'name', values }]);
  });

  it.each([
    ['in.1,2', 'INVALID_FORMAT'],
    ['in.(1,2', 'INVALID_FORMAT'],
    ['in.(a,(b))', 'INVALID_FORMAT'],
    ["in.(');DROP TABLE t;--)", 'INVALID_FORMAT'],
    ['in.("a,b)', 'INVALID_FORMAT'],
    ['in.(a,,b)', 'INVALID_FORMAT'],
    [`in.(${Array.from({ length: 101 }, (_, i) => i).join(',')})`, 'TOO_LONG'],
  ])('%s → 400 %s', (text, code) => {
    expect(problemOf({ name: text })).toEqual({ type: 'validation-error', status: 400, errors: [{ field: 'name', code }] });
  });
});

describe('is.null / is.notnull', () => {
  it.each([
    [{ email: 'is.null' }, { kind: 'is', parameter: 'email', field: 'email', isNull: true }],
    [{ deleted_at: 'is.notnull' }, { kind: 'is', parameter: 'deleted_at', field: 'deleted_at', isNull: false }],
  ])('%j → %j', (query, filter) => {
    expect(parseListQuery(query).filters).toEqual([filter]);
  });

  it.each(['is.true', 'is.NULL', 'is.', "is.null' OR '1"])('%s → 400', (text) => {
    expect(problemOf({ email: text })).toEqual({ type: 'validation-error', status: 400, errors: [{ field: 'email', code: 'INVALID_VALUE' }] });
  });
});

describe('or=(...) and and=(...)', () => {
  const leaf = (field: string, operator: string, value: string) => ({ kind: 'compare', parameter: 'or', field, operator, value });

  it.each([
    ['(age.lt.18,age.gt.60)', { kind: 'or', parameter: 'or', conditions: [leaf('age', 'lt', '18'), leaf('age', 'gt', '60')] }],
    ['(name.eq."a,b",name.eq."c)")', { kind: 'or', parameter: 'or', conditions: [leaf('name', 'eq', 'a,b'), leaf('name', 'eq', 'c)')] }],
    ['(name.eq.x.y)', { kind: 'or', parameter: 'or', conditions: [leaf('name', 'eq', 'x.y')] }],
    ['(age.in.(1,"2"),email.is.null)', {
      kind: 'or', parameter: 'or', conditions: [
        { kind: 'in', parameter: 'or', field: 'age', values: ['1', '2'] },
        { kind: 'is', parameter: 'or', field: 'email', isNull: true },
      ],
    }],
    ['(age.gt.60,and(age.gt.18,name.like.A*))', {
      kind: 'or', parameter: 'or', conditions: [
        leaf('age', 'gt', '60'),
        { kind: 'and', parameter: 'or', conditions: [leaf('age', 'gt', '18'), leaf('name', 'like', 'A*')] },
      ],
    }],
  ])('or=%s', (text, group) => {
    expect(parseListQuery({ or: text }).filters).toEqual([group]);
  });

  it('and=(...) groups with AND', () => {
    expect(parseListQuery({ and: '(age.gt.1,age.lt.5)' }).filters).toEqual([{
      kind: 'and', parameter: 'and', conditions: [
        { kind: 'compare', parameter: 'and', field: 'age', operator: 'gt', value: '1' },
        { kind: 'compare', parameter: 'and', field: 'age', operator: 'lt', value: '5' },
      ],
    }]);
  });

  it.each([
    ['age.lt.18,age.gt.60', 'INVALID_FORMAT'],
    ['()', 'INVALID_FORMAT'],
    ['(age.lt.18', 'INVALID_FORMAT'],
    ['(age)', 'INVALID_FORMAT'],
    ['(age.foo.1)', 'UNKNOWN_OPERATOR'],
    ['(name.eq."unclosed)', 'INVALID_FORMAT'],
    ['("name".eq.1)', 'INVALID_FORMAT'],
    ['(age;DROP TABLE t.eq.1)', 'INVALID_FORMAT'],
    ['(a.eq.1))--(', 'INVALID_FORMAT'],
    [`${'(or'.repeat(9)}(a.eq.1)${')'.repeat(9)}`, 'INVALID_FORMAT'],
  ])('or=%s → 400 %s', (text, code) => {
    expect(problemOf({ or: text })).toEqual({ type: 'validation-error', status: 400, errors: [{ field: 'or', code }] });
  });
});

describe('order=', () => {
  it.each([
    ['age', [{ field: 'age', direction: 'asc' }]],
    ['age.desc,name.asc', [{ field: 'age', direction: 'desc' }, { field: 'name', direction: 'asc' }]],
    ['lastName.desc, firstName', [{ field: 'lastName', direction: 'desc' }, { field: 'firstName', direction: 'asc' }]],
  ])('%s → %j', (text, order) => {
    expect(parseListQuery({ order: text })).toEqual({ filters: [], order, page });
  });

  it.each([
    ['age.up', 'INVALID_VALUE'],
    ['age.asc.nullsfirst', 'INVALID_VALUE'],
    ['', 'INVALID_FORMAT'],
    ['age,,name', 'INVALID_FORMAT'],
    ['"age"', 'INVALID_FORMAT'],
    ['age;DROP TABLE t', 'INVALID_FORMAT'],
    ['(SELECT 1).asc', 'INVALID_FORMAT'],
    ['age desc', 'INVALID_FORMAT'],
  ])('%s → 400 %s', (text, code) => {
    expect(problemOf({ order: text })).toEqual({ type: 'validation-error', status: 400, errors: [{ field: 'order', code }] });
  });
});

describe('select=', () => {
  it.each([
    ['firstName,lastName', [{ kind: 'field', name: 'firstName' }, { kind: 'field', name: 'lastName' }]],
    ['*', [{ kind: 'all' }]],
    ['firstName,companies(name)', [{ kind: 'field', name: 'firstName' }, { kind: 'embed', relation: 'companies', items: [{ kind: 'field', name: 'name' }] }]],
    ['name,contacts(firstName,companies(*))', [
      { kind: 'field', name: 'name' },
      { kind: 'embed', relation: 'contacts', items: [{ kind: 'field', name: 'firstName' }, { kind: 'embed', relation: 'companies', items: [{ kind: 'all' }] }] },
    ]],
    [' id , name ', [{ kind: 'field', name: 'id' }, { kind: 'field', name: 'name' }]],
  ])('%s → %j', (text, select) => {
    expect(parseListQuery({ select: text })).toEqual({ filters: [], select, page });
  });

  it('a third level of relations is 400 relations-depth-exceeded', () => {
    expect(problemOf({ select: 'id,a(b(c(d)))' })).toEqual({ type: 'relations-depth-exceeded', status: 400 });
    expect(problemOf({ select: `a${'(a'.repeat(5000)}${')'.repeat(5000)}` })).toEqual({ type: 'relations-depth-exceeded', status: 400 });
  });

  it.each([
    [''],
    ['a,,b'],
    ['companies()'],
    ['companies(name'],
    ['alias:name'],
    ['name::text'],
    ['"name"'],
    ['name;DROP TABLE t'],
    ['(SELECT password FROM users)'],
    ['companies(name))--'],
  ])('%s → 400', (text) => {
    expect(problemOf({ select: text })).toEqual({ type: 'validation-error', status: 400, errors: [{ field: 'select', code: 'INVALID_FORMAT' }] });
  });
});

describe('page_size / page_token and limit / cursor', () => {
  it.each([
    [{}, page, undefined],
    [{ page_size: '50', page_token: 'abc' }, { ...page, size: 50 }, 'abc'],
    [{ limit: '5', cursor: 'xyz' }, { sizeParameter: 'limit', size: 5, tokenParameter: 'cursor' }, 'xyz'],
    [{ page_token: '' }, page, undefined],
    // PostgREST clients' range(0, n) and limit(n): offset 0 is the first page.
    [{ offset: '0', limit: '10' }, { sizeParameter: 'limit', size: 10, tokenParameter: 'page_token' }, undefined],
    [{ offset: '0', page_token: '' }, page, undefined],
  ])('%j → %j, token %s', (query, expected, token) => {
    const parsed = parseListQuery(query);
    expect(parsed.page).toEqual(expected);
    expect(pageTokenOf(query, parsed.page.tokenParameter)).toBe(token);
  });

  it.each([
    [{ page_size: 'ten' }, 'page_size', 'INVALID_TYPE'],
    [{ page_size: '-1' }, 'page_size', 'INVALID_TYPE'],
    [{ limit: '1;DROP' }, 'limit', 'INVALID_TYPE'],
    [{ page_size: '5', limit: '5' }, 'limit', 'CONFLICTING_FIELDS'],
    [{ page_token: 'a', cursor: 'b' }, 'cursor', 'CONFLICTING_FIELDS'],
    // Keyset pages have no other offset to start at.
    [{ offset: '20', limit: '10' }, 'offset', 'OUT_OF_RANGE'],
    [{ offset: '-1' }, 'offset', 'OUT_OF_RANGE'],
    [{ offset: '00' }, 'offset', 'OUT_OF_RANGE'],
    [{ offset: '0', cursor: 'abc' }, 'offset', 'CONFLICTING_FIELDS'],
    [{ offset: ['0', '0'] }, 'offset', 'INVALID_FORMAT'],
    [{ select: ['a', 'b'] }, 'select', 'INVALID_FORMAT'],
  ])('%j → 400 naming %s', (query, field, code) => {
    expect(problemOf(query)).toEqual({ type: 'validation-error', status: 400, errors: [{ field, code }] });
  });
});

it('every grammar error of a request is reported at once', () => {
  expect(problemOf({ age: 'foo.1', order: 'x.up', select: 'a,,b' })).toEqual({
    type: 'validation-error', status: 400, errors: [
      { field: 'age', code: 'UNKNOWN_OPERATOR' }, { field: 'order', code: 'INVALID_VALUE' }, { field: 'select', code: 'INVALID_FORMAT' },
    ],
  });
});
