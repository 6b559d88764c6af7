#!/usr/bin/env bash
# The README's test command (`npm test`): brings up what the tests need, then runs every test
# project (unit, integration, workflows, replay) against the real services.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "bring-up (services, migrations, topics, gateway, worker, relay)"
bash scripts/infra/up.sh

# npm run puts node_modules/.bin first on PATH, so `node` below is the project's Node 24.
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=test
# The webhook tests' receivers listen on 127.0.0.1 (services/events/webhooks/url-policy.ts).
export WEBHOOKS_ALLOW_LOOPBACK=true

step "typecheck"
tsc -p tsconfig.json --noEmit

# The layout's directions (.dependency-cruiser.cjs) and the lint rules, workflow sandbox included
# (eslint.config.mjs), hold in every run: a violation fails the run like a failing test. So does a
# comment or document naming a repository path that does not exist (scripts/check-paths.ts).
step "lint: dependency-cruiser, eslint, paths"
depcruise api services activities workflows workers db common scripts modules sdk --output-type err
eslint --max-warnings 0 .
node -r ./test/helpers/app-swc-register.cjs scripts/check-paths.ts

step "jest: unit, integration, workflows, replay"
# Jest's own summary is not a line CI reads, so the totals are printed once more in the plain
# "N passed, N failed" form from Jest's JSON report.
# Twice in about 25 full runs Jest did not exit after every test had passed ("did not exit one
# second after the test run"), and the cause did not show again: --forceExit ends the run instead of
# hanging CI.
report="$(mktemp)"
status=0
# The files run one at a time (they share the platform's servers and a few global settings, such as the
# feature flags), in one worker process that Jest replaces once its heap passes 2 GB. Run in Jest's own
# process (what --detectOpenHandles forces) the heap grew with every file loaded: at about 1 600 tests
# it passed Node's 4 GiB, and at about 2 300 tests, after 213 of 229 files, the 8 GiB it was then given.
NODE_OPTIONS="--experimental-vm-modules --max-old-space-size=8192" jest --ci --maxWorkers=1 --workerIdleMemoryLimit=2GB --forceExit --json --outputFile="$report" "$@" || status=$?
# Where the time went, for whoever makes the run faster: the slowest files and each project's sum.
node -e '
  const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const files = r.testResults.map((t) => ({ file: require("node:path").relative(process.cwd(), t.name), seconds: (t.endTime - t.startTime) / 1000 }));
  const projects = new Map();
  for (const { file, seconds } of files) {
    const project = file.split("/")[1] ?? file;
    projects.set(project, (projects.get(project) ?? 0) + seconds);
  }
  console.log("\nslowest test files (s):");
  for (const { file, seconds } of files.sort((a, b) => b.seconds - a.seconds).slice(0, 15)) console.log(`  ${seconds.toFixed(1).padStart(6)}  ${file}`);
  console.log("by folder (s): " + [...projects].sort((a, b) => b[1] - a[1]).map(([name, s]) => `${name} ${s.toFixed(0)}`).join(", "));
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$report" || true
rm -f "$report"
exit "$status"
