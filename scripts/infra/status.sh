#!/usr/bin/env bash
# One line per component: name, port, up/down, pid. Exit status 1 when a server is down.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rc=0
"$INFRA_DIR/services.sh" status "$@" || rc=$?
status_all_bg
printf 'logs: %s\n' "$PLATFORM_LOGS"
exit $rc
