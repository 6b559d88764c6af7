import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { config } from '../common/config';
import { newId } from '../common/ids';
import { uploadInParts } from '../common/object-parts';
import { createObjectStore, removeObjects } from '../common/object-store';
import { measure, type Phase } from './lib/load';
import { reported, startResults } from './lib/results';

/**
 * What storing an upload's body costs the process that streams it (common/object-parts.ts, under
 * issue 17's gateway), one upload after another into the platform's object store:
 * 1. minio's putObject of the body as one Buffer of known length: the floor;
 * 2. uploadInParts of the same bytes as a stream of 64 KiB chunks of unknown length, as the upload
 *    route hands a multipart body over (one PUT below a part, a multipart upload from one part on).
 * Each side reports the wall time and this process's CPU per upload; the sides alternate in rounds.
 *
 *   npm run bench:object-parts -- [--bytes 1090000] [--uploads 150] [--rounds 2]
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { bytes: { type: 'string', default: '1090000' }, uploads: { type: 'string', default: '150' }, rounds: { type: 'string', default: '2' } },
  });
  const bytes = Number(values.bytes);
  const uploads = Number(values.uploads);
  const results = startResults('files-object-parts', values);
  const store = createObjectStore(config().s3);
  const { s3, bucket } = store;
  const body = randomBytes(bytes);
  const prefix = `bench-object-parts/${newId()}`;
  const sides: Record<string, (key: string) => Promise<unknown>> = {
    'putObject, one Buffer of known length (floor)': (key) => s3.putObject(bucket, key, body, body.length, { 'Content-Type': 'image/png' }),
    'uploadInParts, a stream of 64 KiB chunks': (key) => uploadInParts(s3, bucket, key, Readable.from(chunksOf(body)), 'image/png'),
  };
  console.log(`${uploads} uploads of ${bytes} bytes per side and round, one at a time; load average at the start: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log('| side | round | ms per upload | CPU ms per upload |');
  console.log('|---|---|---|---|');
  const keys: string[] = [];
  try {
    // Unmeasured first: connections opened, code compiled.
    for (const upload of Object.values(sides)) {
      const key = `${prefix}/warm-${keys.length}`;
      keys.push(key);
      await upload(key);
    }
    const phases: Phase[] = [];
    for (let round = 1; round <= Number(values.rounds); round += 1) {
      for (const [name, upload] of Object.entries(sides)) {
        const phase = await measure(`${name} (${round})`, 1, 3600, uploads, async () => {
          const key = `${prefix}/${keys.length}`;
          keys.push(key);
          await upload(key);
        }, process.pid);
        phases.push(phase);
        console.log(`| ${name} | ${round} | ${((phase.seconds * 1000) / phase.count).toFixed(2)} | ${phase.cpuMsPerRequest!.toFixed(2)} |`);
      }
    }
    results.write({ phases }, Object.keys(sides).map((name) => {
      const own = phases.filter((phase) => phase.name.startsWith(name));
      return reported(`${name} (no target named)`, own.map((phase) => `${((phase.seconds * 1000) / phase.count).toFixed(2)} ms, ${phase.cpuMsPerRequest!.toFixed(2)} CPU ms`).join(' / ')
        + ' per upload');
    }));
  } finally {
    await removeObjects(store, keys);
  }
}

function* chunksOf(body: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < body.length; offset += 65_536) yield body.subarray(offset, offset + 65_536);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
