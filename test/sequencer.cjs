const { mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest's order, with the durations of the last run kept by the file's path inside the repository.
 *
 * Jest starts the slowest files first, so that two workers finish together rather than one running the
 * longest file alone at the end, but it remembers durations by absolute path, and CI runs every time in
 * a fresh clone in a new folder: it then orders by file size, which put the 160-second fuzz file (a
 * short file) last, and one worker idle for two minutes. These durations live in Jest's cache directory,
 * outside the work tree, and serve every clone on the machine. Files without one (new, or a first run on
 * a machine) go first, in Jest's own order.
 */
class DurationsByRepositoryPath extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    if (ordered.length === 0) return ordered;
    const durations = readDurations(durationsFile(ordered[0]));
    const secondsOf = (test) => durations[repositoryPath(test)];
    return ordered
      .map((test, index) => ({ test, index, seconds: secondsOf(test) }))
      .sort((a, b) => {
        if ((a.seconds === undefined) !== (b.seconds === undefined)) return a.seconds === undefined ? -1 : 1;
        return a.seconds === undefined ? a.index - b.index : b.seconds - a.seconds;
      })
      .map(({ test }) => test);
  }

  cacheResults(tests, results) {
    super.cacheResults(tests, results);
    if (tests.length === 0) return;
    const file = durationsFile(tests[0]);
    const durations = readDurations(file);
    const byPath = new Map(tests.map((test) => [test.path, test]));
    for (const result of results.testResults) {
      const test = byPath.get(result.testFilePath);
      if (test && !result.skipped) durations[repositoryPath(test)] = (result.perfStats.end - result.perfStats.start) / 1000;
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(durations, null, 1));
  }
}

function durationsFile(test) {
  return join(test.context.config.cacheDirectory, 'platform-test-durations.json');
}

function repositoryPath(test) {
  return relative(test.context.config.rootDir, test.path);
}

function readDurations(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

module.exports = DurationsByRepositoryPath;
