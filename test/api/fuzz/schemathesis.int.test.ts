import { NAMESPACES } from '../../../api/http/route-registry';
import { createDbPool, type DatabasePool } from '../../../db/pool';
import type { TestGateway } from '../../helpers/app';
import { ownerUrl } from '../../helpers/db';
import {
  assertSchemathesisInstalled, failureSummary, fuzzIdentity, operationIdsOf, runSchemathesis, startFuzzGateway,
} from '../../helpers/schemathesis';

/**
 * Issue 15, scope item 7: Schemathesis fuzzes every namespace from its own OpenAPI document, as a
 * tenant's owner, and fails on a 5xx, on a response that breaks its documented schema, on a request
 * the document calls valid that the guard refuses as a validation-error (valid_request_not_refused
 * in checks.py, which says why schemathesis' positive_data_acceptance does not fit), and on an error
 * that is not a problem whose status is the HTTP status (problem_status_matches). The quick variant
 * of `npm run fuzz` (test/api/fuzz/fuzz.ts, docs/fuzzing.md), which adds the member and more cases.
 */

// Ten cases per operation in each phase keep the whole file near a minute and a half on 2 cores;
// the seed printed in a failure's output replays a run (`--seed`).
const MAX_EXAMPLES = 10;
const RUN_TIMEOUT_MS = 150_000;

let gateway: TestGateway;
let owner: DatabasePool;

beforeAll(async () => {
  [gateway, owner] = await Promise.all([startFuzzGateway(), createDbPool(ownerUrl(), { maxPoolSize: 2, name: 'schemathesis-test-owner' })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), owner?.end()]);
});

describe('Schemathesis against every namespace document', () => {
  beforeAll(() => {
    assertSchemathesisInstalled();
  });

  test.each(NAMESPACES.map((namespace) => [namespace]))('%s', async (namespace) => {
    // A namespace whose routes have not landed yet has an empty document: nothing to fuzz.
    if ((await operationIdsOf(gateway, namespace)).length === 0) return;

    const identity = await fuzzIdentity(gateway, namespace, 'owner', owner);
    const { exitCode, output } = await runSchemathesis({ gateway, namespace, identity, maxExamples: MAX_EXAMPLES, timeoutMs: RUN_TIMEOUT_MS });
    if (exitCode !== 0) {
      throw new Error(`schemathesis found problems in the ${namespace} API (exit ${exitCode}):\n${failureSummary(output)}`);
    }
  }, RUN_TIMEOUT_MS + 30_000);
});
