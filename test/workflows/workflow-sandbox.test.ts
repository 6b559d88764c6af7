import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../common/paths';
import { bundleWorkflows } from '../../workers/temporal/worker';

/**
 * Workflows are pure orchestration (docs/decisions/layout.md): they run in Temporal's deterministic sandbox, so
 * they may not import Node built-ins, I/O (db, config) or activity code, only the workflow SDK, their
 * own folder, the context codec and the search attributes, which are bundled with them. Type-only imports are erased and
 * always allowed. The bundler catches built-ins as well; this check also catches a value import of
 * activities, config or database code, which would bundle but run I/O inside the sandbox.
 */
const sandboxRoot = join(repoRoot, 'workflows');
const bundledWithWorkflows = ['propagated-context.ts', 'search-attributes.ts'].map((file) => join(repoRoot, 'common', 'temporal', file));
const allowedPackages = new Set(['@temporalio/workflow', '@temporalio/common']);

function workflowFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return workflowFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function isAllowedTarget(fromFile: string, specifier: string): boolean {
  if (!specifier.startsWith('.')) return allowedPackages.has(specifier);
  const target = resolve(dirname(fromFile), specifier);
  return !relative(sandboxRoot, target).startsWith('..') || bundledWithWorkflows.includes(`${target}.ts`);
}

/** Every import of `source` the sandbox would execute that it must not, as "specifier (reason)". */
function sandboxViolations(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const violations: string[] = [];
  const check = (specifier: string, typeOnly: boolean) => {
    const bare = specifier.replace(/^node:/, '');
    if (specifier.startsWith('node:') || builtinModules.includes(bare)) violations.push(`${specifier} (Node built-in)`);
    else if (!typeOnly && !isAllowedTarget(fileName, specifier)) violations.push(`${specifier} (value import from outside the sandbox)`);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!clause.namedBindings
        && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      check(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      check(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword
      || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      violations.push('dynamic import or require');
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return violations;
}

describe('workflow sandbox', () => {
  const files = [...workflowFiles(sandboxRoot), ...bundledWithWorkflows];

  it.each(files.map((file) => [relative(repoRoot, file), file]))('%s imports only what the sandbox may run', (_name, file) => {
    expect(sandboxViolations(file, readFileSync(file, 'utf8'))).toEqual([]);
  });

  it('reports the imports it exists to forbid', () => {
    const file = join(sandboxRoot, 'money', 'example.workflow.ts');
    expect(sandboxViolations(file, [
      "import { readFileSync } from 'node:fs';",
      "import { createHash } from 'crypto';",
      "import { createMaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';",
      "import { config } from '../../common/config';",
      "import type { MaintenanceActivities } from '../../activities/maintenance/expire-stale-records.activities';",
      "import { type Config } from '../../common/config';",
      "import { proxyActivities } from '@temporalio/workflow';",
      "import { helper } from '../_shared/helper';",
    ].join('\n'))).toEqual([
      'node:fs (Node built-in)',
      'crypto (Node built-in)',
      '../../activities/maintenance/expire-stale-records.activities (value import from outside the sandbox)',
      '../../common/config (value import from outside the sandbox)',
    ]);
  });

  it('bundles with the workflow interceptors, as every worker will', async () => {
    const bundle = await bundleWorkflows();
    expect(bundle.code).toContain('expireStaleRecords');
  }, 60_000);
});
