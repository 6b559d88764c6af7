import { spawn } from 'node:child_process';
import { ARGON2_OPTIONS } from '../../../services/identity/passwords';
import { repoRoot } from '../../../common/paths';
import { gatewayMallocTunables } from '../../helpers/gateway-command';

/**
 * A leak the soak found (docs/performance/platform.md): after bursts of logins the gateway's resident
 * set grew by about 80 MB and stayed there. Each Argon2id hash allocates its memory cost (19 MiB) on a
 * libuv thread; with glibc's default the block outlives the hash in that thread's arena. The gateway
 * runs with the tunables of scripts/infra/app-up.sh (docs/decisions/gateway.md, "The gateway's malloc"),
 * under which the blocks go back to the kernel. Each case runs 100 verifications (4 threads busy at
 * once) in a fresh Node process, since a process's arenas outlive whatever ran in it before.
 */
jest.setTimeout(60_000);

const BURST = `
const argon2 = require('argon2');
const options = JSON.parse(process.env.ARGON2_OPTIONS);
(async () => {
  const hash = await argon2.hash('a password of the burst', options);
  const before = process.memoryUsage().rss;
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: 100 }, () => argon2.verify(hash, 'a password of the burst')));
  }
  process.stdout.write(String(process.memoryUsage().rss - before));
})();
`;

/** How much the resident set grew over the bursts, in bytes. */
function growthAfterBursts(env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', BURST], {
      cwd: repoRoot, env: { PATH: process.env.PATH, UV_THREADPOOL_SIZE: '4', ARGON2_OPTIONS: JSON.stringify(ARGON2_OPTIONS), ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`burst exited ${code}: ${err}`))));
  });
}

const hashMemory = ARGON2_OPTIONS.memoryCost * 1024;

describe("the gateway's malloc under bursts of password hashing", () => {
  it("with glibc's default, keeps a hash's memory in at least two of the threads' arenas (what the soak saw)", async () => {
    expect(await growthAfterBursts({})).toBeGreaterThanOrEqual(2 * hashMemory);
  });

  it('with the tunables the gateway runs with, gives every hash its memory back', async () => {
    expect(await growthAfterBursts({ GLIBC_TUNABLES: gatewayMallocTunables() })).toBeLessThan(hashMemory / 2);
  });
});
