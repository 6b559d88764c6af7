#!/usr/bin/env bash
# The README's test command (`npm test`): brings up what the tests need, then runs every test
# project (unit, integration, workflows, replay) against the real services.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
step() { printf '\n== %s (at %d s) ==\n' "$*" "$((SECONDS - started))"; }

step "bring-up (services, migrations, topics, gateway, worker, relay)"
bash scripts/infra/up.sh

# npm run puts node_modules/.bin first on PATH, so `node` below is the project's Node 24.
export PATH="$PWD/node_modules/.bin:$PATH"
export NODE_ENV=test
# The webhook tests' receivers listen on 127.0.0.1 (services/events/webhooks/url-policy.ts).
export WEBHOOKS_ALLOW_LOOPBACK=true

# The static checks (scripts/checks.sh: types, lint, the layout's directions, the paths documents name)
# fail the run like a failing test. They run beside the first Jest run at the lowest priority, on the
# cycles its files leave while they wait on the servers (a fifth of the machine), and report once it ends.
step "typecheck and lint (scripts/checks.sh), beside the tests at the lowest priority"
checks_report="$(mktemp)"
nice -n 19 bash scripts/checks.sh > "$checks_report" 2>&1 &
checks_pid=$!

# Two Jest runs. The first runs the files that may share the machine, two at a time: most of a file's time is
# spent waiting on the servers, so two workers finish the same files in about two thirds of the time, and a
# third worker adds nothing on two cores. Each such file keeps to its own tenants, names, queues, topics, ports
# and scratch databases. The second runs, one at a time, the files that stop or restart a shared server or
# load the machine on purpose (jest.config.js, runsAlone).
# Each worker process is replaced once its heap passes 2 GB: run in one process (what --detectOpenHandles
# forces) the heap grew with every file loaded, past 8 GiB before the last files.
# Twice in about 25 full runs Jest did not exit after every test had passed ("did not exit one second after
# the test run"), and the cause did not show again: --forceExit ends the run instead of hanging CI.
reports=()
status=0
run_jest() {
  local report
  report="$(mktemp)"
  reports+=("$report")
  NODE_OPTIONS="--experimental-vm-modules --max-old-space-size=8192" jest --ci --workerIdleMemoryLimit=2GB --forceExit --passWithNoTests \
    --json --outputFile="$report" "$@" || status=$?
}
step "jest: unit, integration, workflows, replay, two files at a time"
run_jest --maxWorkers=2 --selectProjects unit integration workflows replay "$@"
step "typecheck and lint: their report"
checks_failed=0
wait "$checks_pid" || checks_failed=1
cat "$checks_report"
rm -f "$checks_report"
step "jest: the files that run alone"
run_jest --maxWorkers=1 --selectProjects alone "$@"
step "jest done"
node -r ./test/helpers/app-swc-register.cjs scripts/test-profile.ts "${reports[@]}" || true
rm -f "${reports[@]}"
if [ "$checks_failed" -ne 0 ]; then echo "typecheck or lint failed: see their report above" >&2; exit 1; fi
exit "$status"
