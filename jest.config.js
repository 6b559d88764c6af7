// Four projects, from the bottom of the testing pyramid up. `npm test` runs them all against the
// real services; `npx jest --selectProjects unit` or a file path runs a part.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] };
const common = { transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  // Jest's 5 s default is too short for a test that bundles workflows or starts a gateway on a busy
  // machine; files that need longer still say so with jest.setTimeout.
  testTimeout: 30_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/api/**/*.test.ts', '<rootDir>/test/integration/**/*.test.ts'] },
    { ...common, displayName: 'workflows', testMatch: ['<rootDir>/test/workflows/**/*.test.ts'] },
    { ...common, displayName: 'replay', testMatch: ['<rootDir>/test/replay/**/*.test.ts'] },
  ],
};
