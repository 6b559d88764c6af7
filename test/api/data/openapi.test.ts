import { startTestGateway, type TestGateway } from '../../helpers/app';
import { call } from '../../helpers/http';

/**
 * The data namespace's OpenAPI document (issue 16): the record routes once per autoApi model of the
 * shipped manifests, with each model's record, bodies and filters, from the catalogue the routes serve.
 */

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: string[]; pattern?: string; format?: string; [key: string]: unknown };
interface Parameter { name: string; in: string; required: boolean; schema: Schema; description?: string }
interface Operation {
  operationId: string; parameters: Parameter[]; requestBody?: { content: { 'application/json': { schema: Schema } } };
  responses: Record<string, { content?: { 'application/json': { schema: Schema } }; headers?: Record<string, { required: boolean; schema: Schema; description?: string }> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

let gateway: TestGateway;
let doc: Doc;

beforeAll(async () => {
  gateway = await startTestGateway();
  const answer = await call<Doc>(`${gateway.baseUrl}/api/v1/data/openapi.json`);
  expect(answer.status).toBe(200);
  doc = answer.body;
});

afterAll(async () => {
  await gateway?.close();
});

const parameter = (operation: Operation, name: string) => operation.parameters.find((candidate) => candidate.name === name)!;
const matches = (schema: Schema, value: string) => new RegExp(schema.pattern!).test(value);

it('has concrete paths per model and module, no parametric ones', () => {
  expect(Object.keys(doc.paths).sort()).toEqual([
    '/data/crm/companies', '/data/crm/companies/{id}', '/data/crm/contacts', '/data/crm/contacts/{id}', '/data/crm/models',
  ]);
  expect(Object.keys(doc.paths['/data/crm/contacts']).sort()).toEqual(['get', 'post']);
  expect(Object.keys(doc.paths['/data/crm/contacts/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
  expect(doc.paths['/data/crm/contacts'].get.operationId).toBe('data.crm.contacts.list');
});

it('describes a record: system fields and the model\'s, with JSON types and nullability, and its relations', () => {
  const record = doc.paths['/data/crm/contacts/{id}'].get.responses['200'].content!['application/json'].schema;
  expect(Object.keys(record.properties!)).toEqual([
    'id', 'tenantId', 'createdAt', 'updatedAt', 'deletedAt', 'firstName', 'lastName', 'email', 'age', 'companyId', 'tags', 'companies',
  ]);
  expect(record.properties!.firstName.type).toBe('string');
  expect(record.properties!.age.type).toEqual(['integer', 'null']);
  expect(record.properties!.companyId).toMatchObject({ type: ['string', 'null'], format: 'uuid' });
  expect(record.properties!.deletedAt.type).toEqual(['string', 'null']);
  expect(record.additionalProperties).toBe(false);
});

it('states the create and patch bodies of the model', () => {
  const create = doc.paths['/data/crm/contacts'].post.requestBody!.content['application/json'].schema;
  expect(create.required).toEqual(['firstName']);
  expect(Object.keys(create.properties!)).toEqual(['firstName', 'lastName', 'email', 'age', 'companyId', 'tags']);
  expect(create.properties!.age).toMatchObject({ minimum: -2147483648, maximum: 2147483647 });
  expect(create.additionalProperties).toBe(false);
  const update = doc.paths['/data/crm/contacts/{id}'].patch.requestBody!.content['application/json'].schema;
  expect(update.required).toBeUndefined();
  expect(update.minProperties).toBe(1);
});

it('states the nested records a create may carry: the one-to-many relations, without the reference, at most 100', () => {
  const create = doc.paths['/data/crm/companies'].post;
  const body = create.requestBody!.content['application/json'].schema;
  expect(Object.keys(body.properties!)).toEqual(['name', 'country', 'contacts']);
  expect(body.required).toEqual(['name']);
  const contacts = body.properties!.contacts as Schema & { items: Schema; maxItems: number };
  expect(contacts).toMatchObject({ type: 'array', maxItems: 100 });
  expect(Object.keys(contacts.items.properties!)).toEqual(['firstName', 'lastName', 'email', 'age', 'tags']);
  expect(contacts.items).toMatchObject({ required: ['firstName'], additionalProperties: false });
  // The answer embeds them as the record's relation does.
  const answer = create.responses['201'].content!['application/json'].schema;
  expect(answer.properties!.contacts).toMatchObject({ type: 'array' });
  // contacts nest nothing: companies is their many-to-one relation.
  expect(Object.keys(doc.paths['/data/crm/contacts'].post.requestBody!.content['application/json'].schema.properties!)).not.toContain('companies');
});

it('has every field as a filter parameter whose pattern is the query language for its type', () => {
  const list = doc.paths['/data/crm/contacts'].get;
  for (const name of ['select', 'order', 'or', 'page_size', 'page_token', 'limit', 'cursor', 'id', 'firstName', 'age', 'tags']) {
    expect(parameter(list, name)).toMatchObject({ in: 'query', required: false });
  }
  expect(parameter(list, 'Prefer')).toMatchObject({ in: 'header', required: false });
  // Only names: the route's any-other-key rule of the guard is not a parameter.
  expect(list.parameters.map((candidate) => candidate.name).filter((name) => !/^[A-Za-z_]+$/.test(name))).toEqual([]);
  const age = parameter(list, 'age').schema;
  for (const valid of ['eq.42', 'not.gt.60', 'in.(1,2)', 'not.in.()', 'is.null', 'not.is.notnull']) expect(matches(age, valid)).toBe(true);
  for (const invalid of ['gt.abc', 'like.4*', 'not.not.eq.1', 'eq.1e3', '42']) expect(matches(age, invalid)).toBe(false);
  const firstName = parameter(list, 'firstName').schema;
  for (const valid of ['like.A*', 'not.ilike.a*', 'eq.a,b(c)', 'in.(a,b)']) expect(matches(firstName, valid)).toBe(true);
  expect(matches(parameter(list, 'tags').schema, 'eq.1')).toBe(false);
  expect(matches(parameter(list, 'order').schema, 'age.desc,firstName')).toBe(true);
  expect(matches(parameter(list, 'order').schema, 'tags')).toBe(false);
  expect(matches(parameter(list, 'or').schema, '(age.lt.18,email.not.is.null)')).toBe(true);
  expect(matches(parameter(list, 'select').schema, 'firstName,age')).toBe(true);
});

it('documents count in the list envelope', () => {
  const envelope = doc.paths['/data/crm/contacts'].get.responses['200'].content!['application/json'].schema as { anyOf?: Schema[]; oneOf?: Schema[] };
  const variants = envelope.anyOf ?? envelope.oneOf!;
  for (const variant of variants) expect(variant.properties!.count).toMatchObject({ type: 'integer', minimum: 0 });
});

it('documents the list\'s Content-Range and Preference-Applied headers, and offset 0 (PostgREST clients)', () => {
  const list = doc.paths['/data/crm/contacts'].get;
  const headers = list.responses['200'].headers!;
  expect(Object.keys(headers)).toEqual(['Content-Range', 'Preference-Applied']);
  expect(headers['Content-Range']).toMatchObject({ required: true, schema: { type: 'string' }, description: expect.stringContaining('*/0') });
  for (const range of ['0-19/345', '20-20/*', '*/0', '*/*']) expect(matches(headers['Content-Range'].schema, range)).toBe(true);
  expect(parameter(list, 'offset').schema).toEqual({ const: 0 });
});
