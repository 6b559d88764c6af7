import { parseArgs } from 'node:util';
import { NAMESPACES, type Namespace } from '../../../api/http/route-registry';
import { createDbPool } from '../../../db/pool';
import { ownerUrl } from '../../helpers/db';
import {
  assertSchemathesisInstalled, failureSummary, fuzzIdentity, operationIdsOf, runSchemathesis, startFuzzGateway, type FuzzRole,
} from '../../helpers/schemathesis';

/**
 * `npm run fuzz -- [--examples 25] [--namespaces money,data] [--roles owner,member] [--minutes 15] [--stateful-steps 12] [--seed S]`
 *
 * The long fuzzing run (docs/fuzzing.md): Schemathesis with all four phases, the stateful one
 * following the documents' OpenAPI links from created resources to the operations that take their
 * ids, over every namespace document, once as a fresh tenant's owner and once as a member (the
 * built-in `member` role) of another fresh tenant. It starts its own gateway on an ephemeral port,
 * against the running platform's servers, so it needs `npm run up` and nothing else.
 *
 * Each run (namespace × role) is killed after `--minutes`; the command exits 1 when any run found
 * a failure or was cut off. Targets: no 5xx, no response outside its documented schema, no request
 * the document calls valid refused by validation, and every error a problem whose status is the
 * HTTP status (the checks of test/helpers/schemathesis.ts, test/api/fuzz/checks.py).
 */

const { values } = parseArgs({
  options: {
    examples: { type: 'string', default: '25' },
    namespaces: { type: 'string', default: NAMESPACES.join(',') },
    roles: { type: 'string', default: 'owner,member' },
    minutes: { type: 'string', default: '15' },
    seed: { type: 'string' },
    'stateful-steps': { type: 'string', default: '12' },
  },
});

const EXAMPLES = Number(values.examples);
const RUN_TIMEOUT_MS = Number(values.minutes) * 60_000;
const ROLES: readonly FuzzRole[] = ['owner', 'member'];
const namespaces = listOf(values.namespaces, NAMESPACES, 'namespace');
const roles = listOf(values.roles, ROLES, 'role');
if (!(EXAMPLES >= 1) || !(RUN_TIMEOUT_MS > 0)) throw new Error('--examples and --minutes must be positive');

function listOf<T extends string>(value: string, allowed: readonly T[], what: string): T[] {
  const names = value.split(',').map((name) => name.trim());
  for (const name of names) if (!(allowed as readonly string[]).includes(name)) throw new Error(`unknown ${what} ${name} (${allowed.join(', ')})`);
  return names as T[];
}

interface RunFigures {
  namespace: Namespace;
  role: FuzzRole;
  exitCode: number;
  operations: number;
  /** Schemathesis' summary lines: cases generated, failures, 404-starved operations. */
  cases: string;
  failures: string;
  starved: number;
  seconds: number;
}

/** The figures Schemathesis prints in its summary (`Test cases:`, `Missing test data:`). */
function figuresOf(output: string): Pick<RunFigures, 'cases' | 'failures' | 'starved'> {
  const cases = /^\s*(\d+) generated(?:, (.*))?$/m.exec(output);
  const starved = /Missing test data: (\d+) operations? repeatedly returned 404/.exec(output);
  return {
    cases: cases?.[1] ?? '?',
    failures: cases?.[2] ?? (/No issues found/.test(output) ? 'none' : '?'),
    starved: starved ? Number(starved[1]) : 0,
  };
}

async function main(): Promise<number> {
  assertSchemathesisInstalled();
  const gateway = await startFuzzGateway();
  const owner = await createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'fuzz-owner' });
  const results: RunFigures[] = [];
  try {
    for (const namespace of namespaces) {
      const operations = (await operationIdsOf(gateway, namespace)).length;
      // A namespace whose routes have not landed yet has an empty document: nothing to fuzz.
      if (operations === 0) continue;
      for (const role of roles) {
        const started = Date.now();
        const identity = await fuzzIdentity(gateway, namespace, role, owner);
        console.log(`\n=== ${namespace} as ${role}: ${operations} operations, ${EXAMPLES} examples each ===`);
        const run = await runSchemathesis({
          gateway, namespace, identity, maxExamples: EXAMPLES, timeoutMs: RUN_TIMEOUT_MS, statefulSteps: Number(values['stateful-steps']),
          extraArgs: values.seed ? ['--seed', values.seed] : [],
          onLine: (line) => { if (line.trim()) console.log(`[${namespace}/${role}] ${line}`); },
        });
        const figures = { namespace, role, exitCode: run.exitCode, operations, ...figuresOf(run.output), seconds: Math.round((Date.now() - started) / 1000) };
        results.push(figures);
        if (run.exitCode !== 0) console.log(`\n--- ${namespace} as ${role} failed (exit ${run.exitCode}) ---\n${failureSummary(run.output)}`);
      }
    }
  } finally {
    await owner.end();
    await gateway.close();
  }
  console.log('\nnamespace  role    exit  operations  cases  404-starved  seconds  failures');
  for (const r of results) {
    console.log(`${r.namespace.padEnd(10)} ${r.role.padEnd(7)} ${String(r.exitCode).padStart(4)}  ${String(r.operations).padStart(10)}  ${r.cases.padStart(5)}  ${String(r.starved).padStart(11)}  ${String(r.seconds).padStart(7)}  ${r.failures}`);
  }
  return results.every((r) => r.exitCode === 0) ? 0 : 1;
}

main().then((code) => process.exit(code), (error: unknown) => {
  console.error(error);
  process.exit(1);
});
