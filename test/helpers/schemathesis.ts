import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Namespace } from '../../api/http/route-registry';
import type { DatabasePool } from '../../db/pool';
import { startTestGateway, type TestGateway } from './app';
import { call } from './http';
import { registerAccount } from './identity';
import { installModule } from './modules';
import { verifyEmail } from './money';
import { addMember } from './rbac';

/**
 * Schemathesis against the gateway's namespace documents, shared by the quick run of `npm test`
 * (test/api/fuzz/schemathesis.int.test.ts) and the long one of `npm run fuzz` (test/api/fuzz/fuzz.ts).
 * scripts/infra/install.sh installs Schemathesis into the cache, never the work tree.
 */

const cache = process.env.PLATFORM_CACHE ?? join(homedir(), '.cache', 'platform');
export const SCHEMATHESIS = join(cache, 'venv', 'schemathesis', 'bin', 'schemathesis');
const HOOKS = join(__dirname, '..', 'api', 'fuzz', 'checks.py');

/**
 * Our checks (test/api/fuzz/checks.py says why each is ours): valid_request_not_refused in place of
 * positive_data_acceptance, and problem_status_matches for the RFC 9457 rule that a problem's
 * `status` is the HTTP status.
 */
const CHECKS = 'not_a_server_error,response_schema_conformance,valid_request_not_refused,problem_status_matches';

/**
 * Operations that would end the run's own session: logout revokes the token every later request
 * carries, and so does ending a session by its id, which Schemathesis takes from GET /auth/sessions
 * (its resource pool reuses the ids answers hold): it did, and every later request of the iam run
 * was 401 session-ended, half of the document never reached (test/api/identity holds their tests).
 * Nothing else is left out; a fresh tenant per run keeps what the fuzzer changes (users, roles,
 * plan, wallets) away from the other runs.
 */
const EXCLUDED_OPERATIONS = ['iam.auth.logout', 'iam.auth.sessions.end'];

export function assertSchemathesisInstalled(): void {
  if (!existsSync(SCHEMATHESIS)) {
    throw new Error(`${SCHEMATHESIS} is missing: run scripts/infra/install.sh schemathesis (npm run up installs it)`);
  }
}

/**
 * The gateway Schemathesis talks to. Schemathesis judges answers, not speed, and shares the two
 * cores with this gateway: the largest requests it makes (a company with 100 nested contacts, each
 * with its hooks, event and audit record: 0.3 s on a quiet machine) once passed the 5 s downstream
 * deadline in a CI run and answered 504.
 */
export function startFuzzGateway(): Promise<TestGateway> {
  return startTestGateway({ env: { GRPC_CALL_TIMEOUT_MS: '20000' } });
}

export async function operationIdsOf(gateway: TestGateway, namespace: Namespace): Promise<string[]> {
  const document = await call<{ paths: Record<string, Record<string, { operationId: string }>> }>(`${gateway.baseUrl}/api/v1/${namespace}/openapi.json`);
  if (document.status !== 200) throw new Error(`the ${namespace} document answered ${document.status}`);
  return Object.values(document.body.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId));
}

export type FuzzRole = 'owner' | 'member';

/** Who the fuzzer is: a fresh tenant's owner, or a member (the built-in `member` role) of a fresh tenant. */
export interface FuzzIdentity {
  role: FuzzRole;
  token: string;
  /** The caller's user id, which checks.py hands to the operations that name a member of the tenant (KNOWN_IDS). */
  userId: string;
}

/**
 * What a namespace's operations need of the tenant before they are reachable: the data routes of a
 * module answer 404 module-not-found until the tenant installs it (crm: the shipped manifest whose
 * models the data document describes). The owner installs it before a member is added.
 */
const TENANT_SETUP: Partial<Record<Namespace, (gateway: TestGateway, ownerToken: string) => Promise<void>>> = {
  data: async (gateway, ownerToken) => {
    const installed = await installModule(gateway, ownerToken, 'crm');
    if (installed.status !== 201) throw new Error(`installing crm answered ${installed.status}: ${JSON.stringify(installed.body)}`);
  },
};

/**
 * A fresh tenant set up for the namespace, and the identity of `role` in it, written as the owner
 * database role (`owner`): a member is added as test/helpers/rbac.ts addMember does, and the caller's
 * e-mail is verified, as redeeming the e-mailed link does, since money moves only for a verified
 * caller (403 otherwise): an unverified fuzzer never gets past the first credit.
 */
export async function fuzzIdentity(gateway: TestGateway, namespace: Namespace, role: FuzzRole, owner: DatabasePool): Promise<FuzzIdentity> {
  const account = await registerAccount(gateway);
  await TENANT_SETUP[namespace]?.(gateway, account.accessToken);
  const identity = role === 'owner'
    ? { role, token: account.accessToken, userId: account.user.id }
    : await addMember(gateway, owner, account.tenant.id, 'member').then((member) => ({ role, token: member.token, userId: member.userId }));
  await verifyEmail(owner, identity.userId);
  return identity;
}

export interface SchemathesisRun {
  gateway: TestGateway;
  namespace: Namespace;
  identity: FuzzIdentity;
  /** Cases per operation in each phase. */
  maxExamples: number;
  /**
   * The most calls of one stateful scenario (Schemathesis' default: 6). A chain such as create a
   * wallet, credit it, hold, confirm the hold, read the transaction needs more than the default.
   */
  statefulSteps?: number;
  timeoutMs: number;
  /** Each line of Schemathesis' output as it comes (progress). */
  onLine?: (line: string) => void;
  /** Extra arguments (`--seed`, a report). */
  extraArgs?: readonly string[];
}

export interface SchemathesisResult {
  exitCode: number;
  output: string;
  timedOut: boolean;
}

/** Runs Schemathesis over one namespace document as one identity, in a scratch directory. */
export async function runSchemathesis(run: SchemathesisRun): Promise<SchemathesisResult> {
  const operationIds = await operationIdsOf(run.gateway, run.namespace);
  const workdir = await mkdtemp(join(tmpdir(), `schemathesis-${run.namespace}-`));
  const config = join(workdir, 'schemathesis.toml');
  if (run.statefulSteps) await writeFile(config, `[phases.stateful]\nmax-steps = ${run.statefulSteps}\n`);
  const args = [
    ...(run.statefulSteps ? ['--config-file', config] : []),
    'run', `${run.gateway.baseUrl}/api/v1/${run.namespace}/openapi.json`,
    '--url', `${run.gateway.baseUrl}/v1`,
    '--header', `Authorization: Bearer ${run.identity.token}`,
    '--checks', CHECKS,
    '--max-examples', String(run.maxExamples),
    '--workers', '2',
    '--request-timeout', '20',
    // The documents say text never holds U+0000 (api/http/storable-text.ts); a string with one
    // is not valid data, so the positive cases leave it out.
    '--generation-allow-x00', 'false',
    // Nothing is kept between runs (and nothing is written into the work tree).
    '--generation-database', 'none',
    '--no-color',
    ...EXCLUDED_OPERATIONS.filter((id) => operationIds.includes(id)).flatMap((id) => ['--exclude-operation-id', id]),
    ...(run.extraArgs ?? []),
  ];
  try {
    return await new Promise<SchemathesisResult>((resolve, reject) => {
      const child = spawn(SCHEMATHESIS, args, { cwd: workdir, env: { ...process.env, SCHEMATHESIS_HOOKS: HOOKS, NO_COLOR: '1', FUZZ_USER_ID: run.identity.userId } });
      let output = '';
      let pending = '';
      let timedOut = false;
      const onData = (chunk: Buffer) => {
        const text = chunk.toString();
        output += text;
        if (!run.onLine) return;
        const lines = (pending + text).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) run.onLine(line);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGTERM');
      }, run.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (pending && run.onLine) run.onLine(pending);
        resolve({ exitCode: timedOut ? -1 : code ?? -1, output: timedOut ? `${output}\n(killed after ${run.timeoutMs} ms)` : output, timedOut });
      });
    });
  } finally {
    await rm(workdir, { recursive: true, force: true });
  }
}

/** The part of Schemathesis' report a reader needs: errors, failures and the summary. */
export function failureSummary(output: string): string {
  const start = output.search(/^=+ (ERRORS|FAILURES) =+$/m);
  return start >= 0 ? output.slice(start) : output.slice(-8000);
}
