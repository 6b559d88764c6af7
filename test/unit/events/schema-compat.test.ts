import {
  ANY_OBJECT_SCHEMA, checkSchemaChange, eventSchemaProblems, schemaChanges, type EventSchema,
} from '../../../services/events/schema-compat';
import { KERNEL_SCHEMAS } from '../../../services/events/kernel-schemas';

/** docs/reference/events.md#rule-8: the same type never changes incompatibly; a breaking change needs a new type. */

const contact: EventSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    firstName: { type: 'string' },
    age: { type: ['integer', 'null'] },
    role: { type: 'string', enum: ['lead', 'customer'] },
    address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'firstName'],
  additionalProperties: false,
};

/** A schema of the dialect as a test edits it. */
interface Draft {
  type?: string | string[];
  format?: string;
  enum?: string[];
  description?: string;
  additionalProperties?: boolean;
  required?: string[];
  properties?: Record<string, Draft>;
  items?: Draft;
}

/** The contact schema with `change` applied to a deep copy. */
function changed(change: (schema: Draft) => void): EventSchema {
  const copy = JSON.parse(JSON.stringify(contact)) as Draft;
  change(copy);
  return copy as EventSchema;
}

const v1 = (schema: EventSchema = contact) => ({ version: '1.0.0', schema });

describe('schemaChanges: what a change does to publishers and consumers', () => {
  it.each([
    ['a required field added', 'breaking', '$.email', (s: Draft) => { s.properties!.email = { type: 'string' }; s.required!.push('email'); }],
    ['a field removed', 'breaking', '$.age', (s: Draft) => { delete s.properties!.age; }],
    ['a type changed', 'breaking', '$.age', (s: Draft) => { s.properties!.age = { type: 'string' }; }],
    ['null no longer admitted', 'breaking', '$.age', (s: Draft) => { s.properties!.age = { type: 'integer' }; }],
    ['an optional field made required', 'breaking', '$.age', (s: Draft) => { s.required!.push('age'); }],
    ['a required field made optional', 'breaking', '$.firstName', (s: Draft) => { s.required = ['id']; }],
    ['a format added', 'breaking', '$.firstName', (s: Draft) => { s.properties!.firstName.format = 'email'; }],
    ['a format removed', 'breaking', '$.id', (s: Draft) => { delete s.properties!.id.format; }],
    ['an enum value added', 'breaking', '$.role', (s: Draft) => { s.properties!.role.enum!.push('partner'); }],
    ['an enum value removed', 'breaking', '$.role', (s: Draft) => { s.properties!.role.enum!.pop(); }],
    ['a nested required field removed', 'breaking', '$.address.city', (s: Draft) => { delete s.properties!.address.properties!.city; }],
    ['an array item type changed', 'breaking', '$.tags[]', (s: Draft) => { s.properties!.tags.items!.type = 'integer'; }],
    ['additional members closed', 'breaking', '$.address', (s: Draft) => { s.properties!.address.additionalProperties = false; }],
    ['an optional field added', 'additive', '$.email', (s: Draft) => { s.properties!.email = { type: 'string' }; }],
    ['a nested optional field added', 'additive', '$.address.zip', (s: Draft) => { s.properties!.address.properties!.zip = { type: 'string' }; }],
    ['additional members admitted', 'additive', '$', (s: Draft) => { s.additionalProperties = true; }],
    ['a description changed', 'cosmetic', '$.firstName', (s: Draft) => { s.properties!.firstName.description = 'Given name'; }],
  ])('%s is %s at %s', (_name, kind, path, change) => {
    expect(schemaChanges(contact, changed(change))).toEqual([expect.objectContaining({ kind, path })]);
  });

  it('enum order and required order are not changes', () => {
    expect(schemaChanges(contact, changed((s) => { s.properties!.role.enum!.reverse(); s.required!.reverse(); }))).toEqual([]);
  });
});

describe('checkSchemaChange: registration under the same type, with semantic versions', () => {
  it.each([
    ['the first schema of a type', 'new', null, v1()],
    ['the same version and schema again (a module installed again)', 'unchanged', v1(), v1()],
    ['an optional field in a new minor version', 'upgrade', v1(), { version: '1.1.0', schema: changed((s) => { s.properties!.email = { type: 'string' }; }) }],
    ['an optional field in a later minor version', 'upgrade', v1(), { version: '1.3.0', schema: changed((s) => { s.properties!.email = { type: 'string' }; }) }],
    ['a description in a new patch version', 'upgrade', v1(), { version: '1.0.1', schema: changed((s) => { s.description = 'A contact'; }) }],
    ['the same schema in a new patch version', 'upgrade', v1(), { version: '1.0.1', schema: contact }],
  ])('%s → %s', (_name, outcome, current, next) => {
    expect(checkSchemaChange(current, next)).toEqual({ outcome });
  });

  it.each([
    ['a required field added, even in a new major version', { version: '2.0.0', schema: changed((s) => { s.properties!.email = { type: 'string' }; s.required!.push('email'); }) }, /\$\.email: required field added/],
    ['a field removed', { version: '1.1.0', schema: changed((s) => { delete s.properties!.age; }) }, /\$\.age: field removed/],
    ['a type changed', { version: '1.1.0', schema: changed((s) => { s.properties!.firstName = { type: 'integer' }; }) }, /\$\.firstName: type changed from string to integer/],
    ['an optional field added in a patch version only', { version: '1.0.1', schema: changed((s) => { s.properties!.email = { type: 'string' }; }) }, /needs a new minor version \(1\.1\.0 or later\)/],
    ['another schema under the registered version', { version: '1.0.0', schema: changed((s) => { s.properties!.email = { type: 'string' }; }) }, /registered with another schema/],
    ['an older version', { version: '0.9.0', schema: contact }, /older than the registered 1\.0\.0/],
    ['a compatible change as a new major version', { version: '2.0.0', schema: changed((s) => { s.properties!.email = { type: 'string' }; }) }, /new major version \(2\.0\.0\)/],
    ['a version that is not semantic', { version: '1.1', schema: contact }, /not a semantic version/],
  ])('refuses %s', (_name, next, reason) => {
    const result = checkSchemaChange(v1(), next);
    expect(result.outcome).toBe('refused');
    expect(result.outcome === 'refused' && result.reasons.join('\n')).toMatch(reason);
  });

  it('says that a breaking change needs a new event type', () => {
    const result = checkSchemaChange(v1(), { version: '1.1.0', schema: changed((s) => { delete s.properties!.age; }) });
    expect(result).toEqual({ outcome: 'refused', reasons: ['$.age: field removed: consumers that read it break', 'a breaking change needs a new event type'] });
  });
});

describe('eventSchemaProblems: the dialect the registry accepts', () => {
  it('accepts the kernel schemas, "any JSON object" and a full module schema', () => {
    for (const { schema } of KERNEL_SCHEMAS) expect(eventSchemaProblems(schema)).toEqual([]);
    expect(eventSchemaProblems(ANY_OBJECT_SCHEMA)).toEqual([]);
    expect(eventSchemaProblems(contact)).toEqual([]);
  });

  it.each([
    ['a payload that is not an object', { type: 'string' }, '$: an event payload is an object (type "object")'],
    ['a keyword with no compatibility rule', { type: 'object', properties: { n: { type: 'integer', minimum: 0 } } }, '$.n: keyword minimum is not supported'],
    ['an unknown type', { type: 'object', properties: { n: { type: 'float' } } }, '$.n: type must be one of string, integer, number, boolean, object, array, null, or a list of them'],
    ['a missing type', { type: 'object', properties: { n: {} } }, '$.n: type must be one of string, integer, number, boolean, object, array, null, or a list of them'],
    ['an unknown format', { type: 'object', properties: { n: { type: 'string', format: 'ipv4' } } }, '$.n: format must be one of uuid, date-time, date, email, uri'],
    ['required naming no property', { type: 'object', properties: {}, required: ['id'] }, '$: required id is not among properties'],
    ['additionalProperties as a schema', { type: 'object', additionalProperties: { type: 'string' } }, '$: additionalProperties is true or false'],
  ])('refuses %s', (_name, schema, problem) => {
    expect(eventSchemaProblems(schema)).toContain(problem);
  });
});
