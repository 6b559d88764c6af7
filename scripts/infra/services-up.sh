#!/usr/bin/env bash
# The external-services part of the bring-up: install what is missing, then start every server
# that is down and wait until each answers. up.sh calls it before the application steps.
# PLATFORM_SKIP_INSTALL=1 skips install.sh (everything is known to be there).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ "${PLATFORM_SKIP_INSTALL:-0}" != 1 ]]; then
  "$INFRA_DIR/install.sh"
fi
"$INFRA_DIR/services.sh" up "$@"
