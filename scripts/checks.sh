#!/usr/bin/env bash
# The static checks of every test run (scripts/test.sh), each failure printed with its log: the types
# (tsc), the lint rules with the workflow sandbox (eslint.config.mjs), the layout's directions
# (.dependency-cruiser.cjs), and the paths comments and documents name (scripts/check-paths.ts).
# tsc and eslint take one core each and run side by side. Exits non-zero if any check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
failed=0
tsc -p tsconfig.json --noEmit > "$logs/tsc" 2>&1 &
tsc_pid=$!
eslint --max-warnings 0 . > "$logs/eslint" 2>&1 || { cat "$logs/eslint"; echo "eslint failed"; failed=1; }
wait "$tsc_pid" || { cat "$logs/tsc"; echo "typecheck failed"; failed=1; }
depcruise api services activities workflows workers db common scripts modules sdk --output-type err || failed=1
node -r ./test/helpers/app-swc-register.cjs scripts/check-paths.ts || failed=1
exit "$failed"
