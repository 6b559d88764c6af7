// Lets a child process run the TypeScript sources (for example api/server.ts) without a build:
// each .ts file is compiled by swc on require, with the settings jest.config.js gives @swc/jest.
// Plain JavaScript, because Node loads it (node -r) before anything could compile TypeScript.
const { readFileSync } = require('node:fs');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

Module._extensions['.ts'] = function compileTypeScript(module, filename) {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2023', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
