// ESLint (flat config): typescript-eslint's type-checked recommended rules for every TypeScript
// folder, plus the workflow sandbox rules of Temporal's samples (samples-typescript `.eslintrc.js`).
// dependency-cruiser (`.dependency-cruiser.cjs`) keeps the directions between folders; this file
// keeps what needs the type checker and the sandbox's import bans.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

const tsFolders = ['api', 'services', 'activities', 'workflows', 'workers', 'db', 'common', 'scripts', 'test', 'bench', 'modules', 'sdk'];

// The workflow sandbox replaces `assert` with a deterministic stub; every other built-in is refused
// at bundling time, so the lint refuses it first (as Temporal's samples do).
const ALLOWED_NODE_BUILTINS = new Set(['assert']);
const bareBuiltins = builtinModules.filter((m) => !m.startsWith('node:') && !ALLOWED_NODE_BUILTINS.has(m));

// The top-level folders a workflow may only take types from. `common/temporal/propagated-context`
// and `common/temporal/search-attributes` are the value imports allowed: the workflow interceptors
// share them with the client's and they are sandbox-safe.
const outsideSandbox = ['api', 'services', 'activities', 'db', 'common', 'workers', 'scripts', 'test', 'bench', 'modules', 'sdk'];
const escapesSandbox = `^(\\.\\./)+(?!common/temporal/(propagated-context|search-attributes)$)(${outsideSandbox.join('|')})(/|$)`;

export default defineConfig(
  // sdk/rest/types/ is openapi-typescript's output (npm run sdk:generate), checked against the documents instead.
  globalIgnores(['dist/', 'node_modules/', 'infra/', 'docs/', 'sdk/rest/types/', '**/*.js', '**/*.cjs', '**/*.mjs']),
  {
    files: tsFolders.map((folder) => `${folder}/**/*.ts`),
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // tsc's noUnusedLocals convention: a leading underscore names what is dropped on purpose (`{ secret: _secret, ...rest }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A `let` that a handler registered before its assignment reads cannot become const (temporal dead zone).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A caught `unknown` passes through as it was thrown, as only-throw-error's default already allows for `throw`.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // A zod schema compiles its parser at its first use: built inside a query function, every call paid
    // that again (0.24 ms per row for a one-column count in the gateway, 0.05 µs with the schema kept).
    files: tsFolders.filter((folder) => folder !== 'test' && folder !== 'bench').map((folder) => `${folder}/**/*.ts`),
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.object.name='sql'][callee.property.name='type'] > CallExpression",
        message: 'Declare the row schema once, at module level: a schema built per call compiles its parser again at every call.',
      }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Jest's asymmetric matchers (`expect.any(String)`) and the loosely read answer bodies (test/helpers/money.ts) are typed any; typing each would take hundreds of casts.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // `expect(stub.method).toHaveBeenCalled()` is Jest's idiom; eslint-plugin-jest's jest-aware variant is not installed.
      '@typescript-eslint/unbound-method': 'off',
      // Stubs of async interfaces (fake activities, pools, Kafka handlers) are async so a throw becomes a rejection, as in the real ones.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: bareBuiltins.map((name) => ({
          name,
          message: 'Node built-ins are not available in the workflow sandbox (docs/decisions/layout.md).',
        })),
        patterns: [
          {
            group: ['node:*', '!node:assert'],
            message: 'Node built-ins are not available in the workflow sandbox (docs/decisions/layout.md).',
          },
          {
            regex: escapesSandbox,
            allowTypeImports: true,
            message: 'Workflows take only types from outside workflows/ (`import type`): the sandbox bundles every value import.',
          },
        ],
      }],
    },
  },
);
