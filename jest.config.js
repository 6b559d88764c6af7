const { homedir } = require('node:os');
const { join } = require('node:path');

// Four projects, from the bottom of the testing pyramid up, and a fifth of the files that run alone.
// `npm test` runs them all against the real services (scripts/test.sh: the first four two files at a
// time, then `alone` one file at a time); `npx jest --selectProjects unit` or a file path runs a part.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] };
// Jest's cache (its transforms, and the durations test/sequencer.cjs orders by) lives with the platform's
// other caches outside the work tree (scripts/infra/lib.sh, PLATFORM_CACHE), where every clone finds it.
const cacheDirectory = join(process.env.PLATFORM_CACHE ?? join(homedir(), '.cache/platform'), 'jest');
const common = { transform, cacheDirectory, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

// Files that must not share the machine with another test file. Every other file keeps to its own
// tenants, names, queues, topics, ports and scratch databases, and may run beside any file but these.
const runsAlone = [
  // Kills the platform's gateway, worker and Redis with SIGKILL, and brings them back with the bring-up.
  'test/integration/faults.int.test.ts',
  // Loads the shared platform, then requires every platform-wide backlog to drain to zero.
  'test/integration/platform-bench.int.test.ts',
  // Saturates both cores on purpose, and asserts what a steady tenant sees under that load alone.
  'test/api/money/overload-burst.test.ts',
  // Switches the global billing.enforcement flag off and on: every gateway stops answering 402 meanwhile.
  'test/api/billing/enforcement-flag.test.ts',
].map((file) => `<rootDir>/${file}`);
const shared = { ...common, testPathIgnorePatterns: ['/node_modules/', ...runsAlone] };

module.exports = {
  // Jest's 5 s default is too short for a test that bundles workflows or starts a gateway on a busy
  // machine; files that need longer still say so with jest.setTimeout.
  testTimeout: 30_000,
  // The slowest files first, by the last run's durations whatever folder the clone is in.
  testSequencer: '<rootDir>/test/sequencer.cjs',
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/api/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'] },
    { ...shared, displayName: 'workflows', testMatch: ['<rootDir>/test/workflows/**/*.test.ts'] },
    { ...shared, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
    { ...common, displayName: 'alone', testMatch: runsAlone },
  ],
};
