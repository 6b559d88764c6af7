import { isProblem, problems, type FieldError } from '../../../common/problems';
import type { DataModel } from '../../../db/queries/data/model';
import { DataCatalogue } from '../../../services/data/catalogue';
import {
  MAX_NESTED_RECORDS, addressedAt, createNestedRecords, nestedModels, recordCountOf, splitCreateBody, validateCreate, type CheckedCreate,
} from '../../../services/data/nested-writes';
import { validateRecord, type RecordLimits } from '../../../services/data/record-validation';
import { ModuleCatalogue } from '../../../services/modules/catalogue';
import type { ModuleManifest } from '../../../services/modules/manifest';
import { dataCatalogue, dataModel } from '../../helpers/data-models';

/**
 * The checks of a create body with nested records (services/data/nested-writes.ts): which keys are
 * nested relations, the reference set by the platform, every record's errors in one errors[] named
 * by path, one level deep, at most MAX_NESTED_RECORDS records; and the order records are written in.
 */

const PARENT = '0192f0c2-0000-7000-8000-00000000000a';
const limits: RecordLimits = { maxRecordSizeBytes: 4096, maxJsonbSizeBytes: 1024 };
const companies = dataModel('crm', 'companies');
const contacts = dataModel('crm', 'contacts');
const owners = dataModel('lab', 'owners');

const checked = (model: DataModel, body: Record<string, unknown>, catalogue = dataCatalogue) =>
  validateCreate(model, splitCreateBody(model, catalogue, body), PARENT, limits);

/** The values by field name of the record and of each nested one, as they would be written. */
function written(model: DataModel, body: Record<string, unknown>) {
  const create = checked(model, body);
  const byName = (values: CheckedCreate['values']) => Object.fromEntries(values.fields.map(({ field, value }) => [field.name, value]));
  return {
    values: byName(create.values),
    nested: create.nested.map(({ relation, records }) => ({
      relation: relation.name, reference: relation.reference.name, records: records.map((record) => ({ path: record.path, values: byName(record.values) })),
    })),
  };
}

function errorsOf(work: () => unknown): Partial<FieldError>[] {
  try {
    work();
  } catch (error) {
    if (isProblem(error) && error.type === 'validation-error') return error.extensions.errors!.map(({ field, code }) => ({ field, code }));
    throw error;
  }
  throw new Error('accepted without a problem');
}

/** Two references from meetings to people: the relation `meetings` of people is ambiguous. */
const dual: ModuleManifest = {
  slug: 'dual', name: 'Dual', version: '1.0.0', description: 'test fixture', permissions: [], hooks: [],
  events: { publishes: [], subscribes: [] },
  models: {
    people: { autoApi: true, fields: { name: { type: 'text', nullable: false } } },
    meetings: {
      autoApi: true,
      fields: {
        hostId: { type: 'uuid', nullable: true, references: { model: 'people', field: 'id' } },
        guestId: { type: 'uuid', nullable: true, references: { model: 'people', field: 'id' } },
      },
    },
  },
};
const dualCatalogue = new DataCatalogue(new ModuleCatalogue([dual]));

describe('the keys of a create body', () => {
  it('nests the arrays of one-to-many relations and keeps fields and every other key as the record\'s own', () => {
    const split = splitCreateBody(contacts, dataCatalogue, { firstName: 'Ada', companies: { name: 'Acme' }, colour: 'red' });
    expect(split).toEqual({ own: { firstName: 'Ada', companies: { name: 'Acme' }, colour: 'red' }, nested: [], errors: [] });

    const nested = splitCreateBody(companies, dataCatalogue, { name: 'Acme', contacts: [{ firstName: 'Ada' }] });
    expect(nested.own).toEqual({ name: 'Acme' });
    expect(nested.nested.map(({ relation, value }) => ({ name: relation.name, model: relation.model.name, reference: relation.reference.name, value })))
      .toEqual([{ name: 'contacts', model: 'contacts', reference: 'companyId', value: [{ firstName: 'Ada' }] }]);
    expect(nestedModels(nested)).toEqual([contacts]);
  });

  it('leaves out a relation to a model the API does not serve (lab secrets): an unknown field', () => {
    const things = dataModel('lab', 'things');
    expect(errorsOf(() => checked(things, { label: 't', rank: 1, secrets: [] }))).toEqual([{ field: 'secrets', code: 'UNKNOWN_FIELD' }]);
  });
});

describe('a create with nested records', () => {
  it('sets every nested record\'s reference to the new record and keeps body order', () => {
    expect(written(companies, { name: 'Acme', contacts: [{ firstName: 'Ada', age: 36 }, { firstName: 'Grace', email: 'G@X.ORG' }] })).toEqual({
      values: { name: 'Acme' },
      nested: [{
        relation: 'contacts', reference: 'companyId',
        records: [
          { path: 'contacts[0]', values: { firstName: 'Ada', age: 36, companyId: PARENT } },
          { path: 'contacts[1]', values: { firstName: 'Grace', email: 'G@X.ORG', companyId: PARENT } },
        ],
      }],
    });
  });

  it('takes an empty array (nothing nested) and counts every record against the plan', () => {
    expect(recordCountOf(checked(companies, { name: 'Acme', contacts: [] }))).toBe(1);
    expect(recordCountOf(checked(companies, { name: 'Acme', contacts: [{ firstName: 'A' }, { firstName: 'B' }] }))).toBe(3);
    expect(recordCountOf(checked(companies, { name: 'Acme' }))).toBe(1);
  });

  it('checks a body without nested relations exactly as a record alone', () => {
    expect(checked(companies, { name: 'Acme', country: 'FR' })).toEqual({ values: validateRecord(companies, { name: 'Acme', country: 'FR' }, 'create', limits), nested: [] });
    expect(() => checked(companies, { country: 'FR' })).toThrow(expect.objectContaining({ detail: 'The companies record is not valid' }));
  });

  it(`takes ${MAX_NESTED_RECORDS} nested records`, () => {
    const rows = Array.from({ length: MAX_NESTED_RECORDS }, (_, index) => ({ firstName: `c${index}` }));
    expect(recordCountOf(checked(companies, { name: 'Acme', contacts: rows }))).toBe(MAX_NESTED_RECORDS + 1);
  });

  it.each<[string, DataModel, Record<string, unknown>, Partial<FieldError>[]]>([
    ['a nested relation that is no array', companies, { name: 'Acme', contacts: { firstName: 'Ada' } }, [{ field: 'contacts', code: 'INVALID_TYPE' }]],
    ['a nested record that is no object', companies, { name: 'Acme', contacts: [{ firstName: 'Ada' }, 'Grace', null] },
      [{ field: 'contacts[1]', code: 'INVALID_TYPE' }, { field: 'contacts[2]', code: 'INVALID_TYPE' }]],
    ['the reference named in a nested record', companies, { name: 'Acme', contacts: [{ firstName: 'Ada', companyId: PARENT }] },
      [{ field: 'contacts[0].companyId', code: 'UNKNOWN_FIELD' }]],
    ['a system field in a nested record', companies, { name: 'Acme', contacts: [{ firstName: 'Ada', id: PARENT }] }, [{ field: 'contacts[0].id', code: 'UNKNOWN_FIELD' }]],
    ['mistakes of the record and of several nested records, all at once', companies,
      { country: 1, contacts: [{ firstName: 'Ada' }, { age: 'old' }, { firstName: 'Grace', tags: 'x'.repeat(2000) }] },
      [
        { field: 'country', code: 'INVALID_TYPE' }, { field: 'name', code: 'REQUIRED' },
        { field: 'contacts[1].age', code: 'INVALID_TYPE' }, { field: 'contacts[1].firstName', code: 'REQUIRED' },
        { field: 'contacts[2].tags', code: 'TOO_LONG' },
      ]],
    ['a nested record over the record size limit', companies, { name: 'Acme', contacts: [{ firstName: 'x'.repeat(5000) }] },
      [{ field: 'contacts[0]', code: 'TOO_LONG' }]],
    ['a nested record with nested records of its own (one level deep)', owners, { name: 'o', things: [{ label: 't', rank: 1, parts: [{ name: 'p' }] }] },
      [{ field: 'things[0].parts', code: 'UNKNOWN_FIELD' }]],
    ['a many-to-one relation as an object', contacts, { firstName: 'Ada', companies: { name: 'Acme' } }, [{ field: 'companies', code: 'UNKNOWN_FIELD' }]],
    [`more than ${MAX_NESTED_RECORDS} nested records`, companies,
      { name: 'Acme', contacts: Array.from({ length: MAX_NESTED_RECORDS + 1 }, () => ({ firstName: 'x' })) }, [{ field: 'contacts', code: 'TOO_LONG' }]],
  ])('refuses %s, naming each field by its path', (_, model, body, errors) => {
    expect(errorsOf(() => checked(model, body))).toEqual(errors);
  });

  it('refuses a relation named ambiguously (two references between the models)', () => {
    const people = dualCatalogue.model('dual', 'people')!;
    expect(errorsOf(() => checked(people, { name: 'Ada', meetings: [{}] }, dualCatalogue))).toEqual([{ field: 'meetings', code: 'AMBIGUOUS_RELATION' }]);
  });

  it('explains why a relation is refused: one level deep in a create, not at all in an update', () => {
    const deep = () => checked(owners, { name: 'o', things: [{ label: 't', rank: 1, parts: [] }] });
    expect(deep).toThrow(expect.objectContaining({
      extensions: { errors: [expect.objectContaining({ message: expect.stringMatching(/one level deep/) })] },
    }));
    const update = () => validateRecord(companies, { contacts: [{ firstName: 'Ada' }] }, 'update', limits);
    expect(errorsOf(update)).toEqual([{ field: 'contacts', code: 'UNKNOWN_FIELD' }]);
    expect(update).toThrow(expect.objectContaining({
      extensions: { errors: [expect.objectContaining({ message: expect.stringMatching(/only by a create/) })] },
    }));
  });
});

describe('a nested record\'s refusal by a hook', () => {
  it('names its fields by path, and leaves other problems as they are', () => {
    const refusal = problems.validation([{ field: 'age', code: 'OUT_OF_RANGE', message: 'age may not be below 0' }], 'The contacts record is not valid');
    expect(addressedAt('contacts[2]', refusal)).toEqual(expect.objectContaining({
      type: 'validation-error', extensions: { errors: [{ field: 'contacts[2].age', code: 'OUT_OF_RANGE', message: 'age may not be below 0' }] },
    }));
    const conflict = problems.forbidden('no');
    expect(addressedAt('contacts[2]', conflict)).toBe(conflict);
  });
});

describe('writing nested records', () => {
  it('creates them one after the other in body order and answers them by relation', async () => {
    const create = checked(owners, { name: 'o', things: [{ label: 'a', rank: 1 }, { label: 'b', rank: 2 }] });
    const calls: string[] = [];
    const embedded = await createNestedRecords(create, async (model, record) => {
      calls.push(`${model.name} ${record.path}`);
      return { id: record.path! };
    });
    expect(calls).toEqual(['things things[0]', 'things things[1]']);
    expect(embedded).toEqual({ things: [{ id: 'things[0]' }, { id: 'things[1]' }] });
  });
});
