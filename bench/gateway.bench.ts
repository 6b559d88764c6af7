import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createDbPool } from '../db/pool';
import { addMembership } from '../test/helpers/identity';
import { apiClient, measure, percent, printPhases, ratePerSecond as rate, startBenchGateway, startChildServer, type Phase } from './lib/load';
import { atLeast, startResults } from './lib/results';

/**
 * The gateway's own overhead (issue 4), in one run on this machine:
 * - the full pipeline: GET /v1/gateway/hello/secure (ES256 token, permission resolved for an admin,
 *   rate limit counted in Redis, validation, request metrics);
 * - the same handler with every check off: GET /v1/gateway/hello;
 * - a bare Koa route that only verifies the ES256 token, and a bare Koa hello world.
 * Targets: full pipeline >= 60 % of checks-off, and >= 75 % of the bare verifying route.
 * Issue 5: the full pipeline on a second gateway with BILLING_ENABLED=false, so the cost of limit
 * enforcement (plan and status from the per-tenant cache) shows; target: enforcement on >= 90 % of off.
 *
 *   npm run bench:gateway -- [--concurrency 16] [--seconds 5] [--max 50000] [--gateway-node-options='--cpu-prof --cpu-prof-dir=/tmp/prof']
 *
 * --gateway-node-options: NODE_OPTIONS of the (billing-enforcing) gateway, e.g. to profile it; the
 * profile is written when the bench stops it.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '16' }, seconds: { type: 'string', default: '5' }, max: { type: 'string', default: '50000' },
      'gateway-node-options': { type: 'string', default: '' },
    },
  });
  const concurrency = Number(values.concurrency);
  const seconds = Number(values.seconds);
  const max = Number(values.max);
  const results = startResults('gateway', values);

  const gateway = await startBenchGateway({ NODE_OPTIONS: values['gateway-node-options'] });
  const bare = await startChildServer('bench/lib/bare-koa.ts', 'bare koa listening');
  const unenforced = await startBenchGateway({ BILLING_ENABLED: 'false' });
  try {
    const call = apiClient(gateway.baseUrl);
    // An admin, not the owner: the owner skips the permission lookup, an admin does not.
    const owner = await call('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    const admin = await call('POST', '/auth/register', { email: `bench.${newId()}@example.test`, password: 'bench-passphrase-of-some-length' });
    const tenantId = (owner.tenant as { id: string }).id;
    const ownerPool = await createDbPool(config().db.ownerUrl, { maxPoolSize: 1, name: 'bench-gateway-owner' });
    await addMembership(ownerPool, tenantId, (admin.user as { id: string }).id, 'admin').finally(() => ownerPool.end());
    const token = String((await call('POST', '/auth/switch-tenant', { tenantId }, String(admin.accessToken))).accessToken);

    const get = (url: string, headers: Record<string, string> = {}) => async () => {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    };
    const auth = { authorization: `Bearer ${token}` };
    const steps = {
      hello: get(`${bare.baseUrl}/hello`),
      verified: get(`${bare.baseUrl}/verified`, auth),
      checksOff: get(`${gateway.baseUrl}/v1/gateway/hello`),
      full: get(`${gateway.baseUrl}/v1/gateway/hello/secure`, auth),
      unenforced: get(`${unenforced.baseUrl}/v1/gateway/hello/secure`, auth),
    };
    // Steady state is measured: every route first runs a second unmeasured, so no phase pays for the
    // JIT compiling its code (and its server's first connections), whichever phase comes first.
    for (const step of Object.values(steps)) await measure('warm-up', concurrency, 1, max, step);
    const phases = [
      await measure('bare Koa hello world', concurrency, seconds, max, steps.hello, bare.child.pid),
      await measure('bare Koa, ES256 verification only', concurrency, seconds, max, steps.verified, bare.child.pid),
      await measure('gateway, checks off (GET /gateway/hello)', concurrency, seconds, max, steps.checksOff, gateway.child.pid),
      await measure('gateway, full pipeline (GET /gateway/hello/secure)', concurrency, seconds, max, steps.full, gateway.child.pid),
    ];
    console.log(`concurrency ${concurrency}; up to ${seconds} s or ${max} requests per phase`);
    printPhases(phases);
    const [, verifying, checksOff, full] = phases;
    console.log(`full pipeline / checks off: ${((rate(full) / rate(checksOff)) * 100).toFixed(0)} % (target 60 %)`);
    console.log(`full pipeline / bare ES256 route: ${((rate(full) / rate(verifying)) * 100).toFixed(0)} % (target 75 %)`);
    // Throughput ratios drift with whatever else runs on the machine; the CPU cost ratio does not.
    const cost = (phase: Phase) => phase.cpuMsPerRequest!;
    console.log(`by server CPU per request: full / checks off ${((cost(checksOff) / cost(full)) * 100).toFixed(0)} %, full / bare ES256 ${((cost(verifying) / cost(full)) * 100).toFixed(0)} %`);
    // On and off alternate in short rounds, so load from other processes on the machine hits both alike.
    const rounds: Array<[Phase, Phase]> = [];
    for (let round = 0; round < 3; round += 1) {
      rounds.push([
        await measure(`billing enforcement on, round ${round + 1}`, concurrency, seconds / 2, max, steps.full, gateway.child.pid),
        await measure(`billing enforcement off, round ${round + 1}`, concurrency, seconds / 2, max, steps.unenforced, unenforced.child.pid),
      ]);
    }
    printPhases(rounds.flat());
    const total = (side: 0 | 1) => rounds.reduce((sum, pair) => sum + rate(pair[side]), 0);
    const cpu = (side: 0 | 1) => rounds.reduce((sum, pair) => sum + cost(pair[side]), 0);
    console.log(`billing enforcement on / off: ${((total(0) / total(1)) * 100).toFixed(0)} % (target 90 %); by server CPU per request ${((cpu(1) / cpu(0)) * 100).toFixed(0)} %`);
    results.write({ phases, billingRounds: rounds.flat() }, [
      atLeast('full pipeline ≥ 60 % of the gateway with its checks off, by throughput (issue 4)', rate(full) / rate(checksOff), 0.6,
        `${percent(rate(full), rate(checksOff))} (by server CPU ${percent(cost(checksOff), cost(full))})`),
      atLeast('full pipeline ≥ 75 % of a bare Koa app verifying ES256 only (issue 4)', rate(full) / rate(verifying), 0.75,
        `${percent(rate(full), rate(verifying))} (by server CPU ${percent(cost(verifying), cost(full))})`),
      atLeast('billing enforcement on ≥ 90 % of off (issue 4)', total(0) / total(1), 0.9, `${percent(total(0), total(1))} (by server CPU ${percent(cpu(1), cpu(0))})`),
    ]);
  } finally {
    // Waited for, so a profiling gateway writes its profile before the bench's pipes close.
    await Promise.all([gateway, bare, unenforced].map(({ child }) => new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    })));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
