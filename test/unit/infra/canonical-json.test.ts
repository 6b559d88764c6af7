import { canonicalJson, CanonicalJsonError } from '../../../common/canonical-json';

/** The canonical serialization the audit hash chain, the idempotency request hash and the schema comparison are computed over. */

describe('canonicalJson', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'null'],
    ['booleans', [true, false], '[true,false]'],
    ['integers and fractions as JSON writes them', [1, -0, 1.5, 1e21, 0.1], '[1,0,1.5,1e+21,0.1]'],
    ['non-finite numbers as JSON writes them', [Number.NaN, Infinity], '[null,null]'],
    ['strings with escapes', 'a"b\\c\n\u0001é😀', '"a\\"b\\\\c\\n\\u0001é😀"'],
    ['members sorted by key', { b: 1, a: 2, A: 3, aa: 4 }, '{"A":3,"a":2,"aa":4,"b":1}'],
    ['keys sorted by UTF-16 code units', { 'é': 1, z: 2, '😀': 3, '\uffff': 4 }, '{"z":2,"é":1,"😀":3,"\uffff":4}'],
    ['nested objects sorted at every level', { y: { d: [{ c: 1, b: 2 }], a: null } }, '{"y":{"a":null,"d":[{"b":2,"c":1}]}}'],
    ['undefined members left out', { a: undefined, b: 1 }, '{"b":1}'],
    ['undefined array items as null', [undefined, 1], '[null,1]'],
    ['empty containers', { a: {}, b: [] }, '{"a":{},"b":[]}'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('gives the same text whatever order the keys were built in (jsonb does not keep it)', () => {
    const built = { meta: { x: 1, y: [1, { q: 1, p: 2 }] }, id: 'a' };
    const reordered = JSON.parse('{"id":"a","meta":{"y":[1,{"p":2,"q":1}],"x":1}}') as unknown;
    expect(canonicalJson(reordered)).toBe(canonicalJson(built));
  });

  it.each<[string, unknown]>([
    ['a Date', new Date(0)],
    ['a BigInt', 1n],
    ['a Map', new Map()],
    ['a function', () => 1],
  ])('refuses %s, which is no JSON value', (_name, value) => {
    expect(() => canonicalJson({ value })).toThrow(CanonicalJsonError);
  });
});
