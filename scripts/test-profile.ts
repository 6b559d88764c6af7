import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Where `npm test`'s time went, for whoever makes the run faster: the slowest files, each folder's sum
 * and the totals, read from the JSON reports of its Jest runs (scripts/test.sh runs two: the files that
 * may share the machine, two at a time, then those that run alone). The totals are printed in the plain
 * "N passed, N failed" form as well, since Jest's own summary is per run and not a line CI reads.
 *
 *   node -r ./test/helpers/app-swc-register.cjs scripts/test-profile.ts <report.json>…
 */
interface JestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { name: string; startTime: number; endTime: number }[];
}

function main(paths: readonly string[]): void {
  const reports = paths.map((path) => JSON.parse(readFileSync(path, 'utf8')) as JestReport);
  const files = reports.flatMap((report) => report.testResults)
    .map((result) => ({ file: relative(process.cwd(), result.name), seconds: (result.endTime - result.startTime) / 1000 }));
  const folders = new Map<string, number>();
  for (const { file, seconds } of files) {
    const folder = file.split('/')[1] ?? file;
    folders.set(folder, (folders.get(folder) ?? 0) + seconds);
  }
  console.log('\nslowest test files (s):');
  for (const { file, seconds } of files.sort((a, b) => b.seconds - a.seconds).slice(0, 15)) console.log(`  ${seconds.toFixed(1).padStart(6)}  ${file}`);
  console.log(`by folder (s, summed over files): ${[...folders].sort((a, b) => b[1] - a[1]).map(([name, s]) => `${name} ${s.toFixed(0)}`).join(', ')}`);
  const sum = (count: (report: JestReport) => number) => reports.reduce((total, report) => total + count(report), 0);
  console.log(`jest: ${sum((r) => r.numPassedTests)} passed, ${sum((r) => r.numFailedTests)} failed, ${sum((r) => r.numPendingTests)} skipped`);
}

main(process.argv.slice(2));
