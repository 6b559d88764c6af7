#!/usr/bin/env bash
# One line per component: name, port, up/down, pid. Exit status 1 when a server is down.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rc=0
"$INFRA_DIR/services.sh" status "$@" || rc=$?
status_all_bg
# The gateway's gRPC EventService (api/grpc/server.ts): up when its port accepts connections; like the
# app processes above, it is reported, not counted in the exit status (that is the servers').
grpc_port=${GRPC_PORT:-50051}
if port_open 127.0.0.1 "$grpc_port"; then
  printf '%-10s %-12s %-5s pid=%s\n' grpc "$grpc_port" up "$(bg_pid api 2>/dev/null || echo -)"
else
  printf '%-10s %-12s %-5s pid=%s\n' grpc "$grpc_port" down -
fi
printf 'logs: %s\n' "$PLATFORM_LOGS"
exit $rc
