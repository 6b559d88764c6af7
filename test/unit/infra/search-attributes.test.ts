import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TypedSearchAttributes, type SearchAttributePair } from '@temporalio/common';
import { repoRoot } from '../../../common/paths';
import {
  BusinessKind, businessKinds, platformSearchAttributeKeys, TenantId, tenantOfInput, WalletId, withPlatformSearchAttributes,
} from '../../../common/temporal/search-attributes';
import { taskQueues } from '../../../common/temporal/task-queues';

const listFile = 'infra/temporal/search-attributes.txt';

/** `<name> <type>` per line of the list the bring-up scripts register; comments and blank lines skipped. */
function registeredList(): Array<[name: string, type: string]> {
  return readFileSync(join(repoRoot, listFile), 'utf8').split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const fields = line.split(/\s+/);
      if (fields.length !== 2) throw new Error(`${listFile}: expected "<name> <type>", got "${line}"`);
      return [fields[0], fields[1]];
    });
}

/** Each workflow type workflows/index.ts exports, with the folder and file (without .workflow.ts) it comes from. */
function exportedWorkflows(): Array<{ type: string; domain: string; file: string; first: boolean }> {
  const index = readFileSync(join(repoRoot, 'workflows/index.ts'), 'utf8');
  return [...index.matchAll(/^export \{ ([^}]+) \} from '\.\/([\w-]+)\/([\w-]+)\.workflow';$/gm)]
    .flatMap(([, names, domain, file]) => names.split(',').map((name, position) => ({ type: name.trim(), domain, file, first: position === 0 })));
}

const pairs = (attributes: SearchAttributePair[] | undefined) => attributes?.map(({ key, value }) => [key.name, value]);

describe('search attributes', () => {
  it(`declares exactly the attributes ${listFile} registers, with the same types`, () => {
    const declared = platformSearchAttributeKeys.map((key) => [key.name, TypedSearchAttributes.toMetadataType(key.type)]);
    expect(declared).toEqual(registeredList());
    expect(registeredList().map(([name]) => name)).toEqual(['TenantId', 'BusinessKind', 'WalletId']);
  });

  it('is the list the bring-up registers', () => {
    expect(readFileSync(join(repoRoot, 'scripts/infra/services/temporal.sh'), 'utf8')).toContain(listFile);
  });

  describe('BusinessKind', () => {
    const workflows = exportedWorkflows();

    it('names every workflow the workers run, and nothing else', () => {
      expect(workflows.length).toBeGreaterThanOrEqual(18);
      expect(Object.keys(businessKinds).sort()).toEqual(workflows.map(({ type }) => type).sort());
    });

    it.each(exportedWorkflows().map((w) => [w.type, w]))('%s is <domain>.<file> of where it lives', (_type, { type, domain, file, first }) => {
      const kind = businessKinds[type];
      expect(Object.keys(taskQueues)).toContain(domain);
      // The first workflow of a file is the file's kind; another one of the same file adds its own suffix.
      if (first) expect(kind).toBe(`${domain}.${file}`);
      else expect(kind).toMatch(new RegExp(`^${domain}\\.${file}-[a-z-]+$`));
    });

    it('is unique per workflow type', () => {
      const kinds = Object.values(businessKinds);
      expect(new Set(kinds).size).toBe(kinds.length);
    });
  });

  describe('withPlatformSearchAttributes', () => {
    it.each<[string, Parameters<typeof withPlatformSearchAttributes>, Array<[string, unknown]> | undefined]>([
      ['a tenant\'s workflow: its kind and tenant', [undefined, 'moneyTransfer', 't1'], [['BusinessKind', 'money.transfer'], ['TenantId', 't1']]],
      ['a fleet-wide sweep: its kind alone', [undefined, 'moneyHoldSweep', undefined], [['BusinessKind', 'money.hold-sweep']]],
      ['what the starter gave is kept', [[{ key: WalletId, value: ['w1', 'w2'] }], 'moneyTransfer', 't1'],
        [['WalletId', ['w1', 'w2']], ['BusinessKind', 'money.transfer'], ['TenantId', 't1']]],
      ['an explicit tenant and kind win', [[{ key: TenantId, value: 't0' }, { key: BusinessKind, value: 'x.y' }], 'fileScan', 't1'],
        [['TenantId', 't0'], ['BusinessKind', 'x.y']]],
      ['a typed set is read as its pairs', [new TypedSearchAttributes([{ key: TenantId, value: 't0' }]), 'fileScan', 't1'],
        [['TenantId', 't0'], ['BusinessKind', 'files.scan']]],
      ['an unknown type gets no kind', [undefined, 'probeWorkflow', 't1'], [['TenantId', 't1']]],
      ['nothing to set leaves the start as it was', [undefined, 'probeWorkflow', undefined], undefined],
      ['a name of Object.prototype is no workflow type', [undefined, 'constructor', undefined], undefined],
    ])('%s', (_case, args, expected) => {
      expect(pairs(withPlatformSearchAttributes(...args))).toEqual(expected);
    });
  });

  describe('tenantOfInput', () => {
    it.each<[string, unknown[] | undefined, string | undefined]>([
      ['the first argument\'s tenantId', [{ tenantId: 't1', fileId: 'f1' }], 't1'],
      ['no arguments', undefined, undefined],
      ['an input without a tenant (sendEmail)', [{ message: {}, idempotencyKey: 'k' }], undefined],
      ['a tenantId that is not a string', [{ tenantId: 42 }], undefined],
      ['an empty tenantId', [{ tenantId: '' }], undefined],
      ['a first argument that is no object', ['t1'], undefined],
    ])('%s', (_case, args, expected) => {
      expect(tenantOfInput(args)).toBe(expected);
    });
  });
});
