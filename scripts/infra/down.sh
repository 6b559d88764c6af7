#!/usr/bin/env bash
# Stops the local platform: first the application processes started with start_bg (API, worker,
# relay...), then the external servers. Data is kept.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=down

stop_all_bg
"$INFRA_DIR/services.sh" down "$@"
