#!/usr/bin/env bash
# One line per component of the running profile: name, port, up/down, pid; every replica of the
# cluster profile has its own line. Exit status 1 when a server is down.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rc=0
printf 'profile: %s\n' "$PLATFORM_PROFILE"
"$INFRA_DIR/services.sh" status "$@" || rc=$?
# The app processes (a gateway's port column names its HTTP and gRPC ports); like the gRPC line below,
# they are reported, not counted in the exit status (that is the servers').
status_all_bg
if [[ "$PLATFORM_PROFILE" == default ]]; then
  # The gateway's gRPC EventService (api/grpc/server.ts): up when its port accepts connections.
  grpc_port=${GRPC_PORT:-50051}
  if port_open 127.0.0.1 "$grpc_port"; then
    printf '%-17s %-12s %-5s pid=%s\n' grpc "$grpc_port" up "$(bg_pid api 2>/dev/null || echo -)"
  else
    printf '%-17s %-12s %-5s pid=%s\n' grpc "$grpc_port" down -
  fi
fi
printf 'logs: %s\n' "$PLATFORM_LOGS"
exit $rc
