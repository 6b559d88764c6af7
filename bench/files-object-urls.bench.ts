import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { createObjectStore, removeObjects } from '../common/object-store';
import { presignedUrlOf } from '../services/files/views';
import { measure, type Phase } from './lib/load';
import { reported, startResults } from './lib/results';

/**
 * What signing costs the process that talks to the object store (SigV4, minio), one call after
 * another: every file object the files routes answer carries presigned URLs (a page of 20 files, 20;
 * a file's meta, one per thumbnail), and every S3 request the gateway and the worker make is signed.
 * 1. presigned GET URLs of a file, as services/files/views.ts makes them (no request sent);
 * 2. statObject of a small object: one signed request and its answer from the platform's store.
 * Each side reports the wall time and this process's CPU per call; the sides alternate in rounds.
 *
 *   npm run bench:object-urls -- [--calls 5000] [--rounds 2]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '5000' }, rounds: { type: 'string', default: '2' } } });
  const calls = Number(values.calls);
  const results = startResults('files-object-urls', values);
  const store = createObjectStore(config().s3);
  const key = `bench-object-urls/${newId()}`;
  await store.s3.putObject(store.bucket, key, Buffer.from('bench'), 5, { 'Content-Type': 'text/plain' });
  const sides: Record<string, () => Promise<unknown>> = {
    'presigned GET URL of a file': () => presignedUrlOf(store, key, 300, 'image/png'),
    'statObject, one signed request': () => store.s3.statObject(store.bucket, key),
  };
  console.log(`${calls} calls per side and round, one at a time; load average at the start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log('| side | round | µs per call | CPU µs per call |');
  console.log('|---|---|---|---|');
  try {
    // Unmeasured first: connections opened, code compiled.
    for (const call of Object.values(sides)) for (let i = 0; i < 200; i += 1) await call();
    const phases: Phase[] = [];
    const perCall = (phase: Phase) => `${((phase.seconds * 1e6) / phase.count).toFixed(1)} µs, ${(phase.cpuMsPerRequest! * 1000).toFixed(1)} CPU µs`;
    for (let round = 1; round <= Number(values.rounds); round += 1) {
      for (const [name, call] of Object.entries(sides)) {
        const phase = await measure(`${name} (${round})`, 1, 3600, calls, async () => { await call(); }, process.pid);
        phases.push(phase);
        console.log(`| ${name} | ${round} | ${((phase.seconds * 1e6) / phase.count).toFixed(1)} | ${(phase.cpuMsPerRequest! * 1000).toFixed(1)} |`);
      }
    }
    results.write({ phases }, Object.keys(sides).map((name) => reported(`${name} (no target named)`,
      `${phases.filter((phase) => phase.name.startsWith(name)).map(perCall).join(' / ')} per call`)));
  } finally {
    await removeObjects(store, [key]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
