#!/usr/bin/env bash
# Temporal on gRPC 127.0.0.1:7233 with its Web UI on http://127.0.0.1:8233, namespace
# $TEMPORAL_NAMESPACE (default `default`). Which server depends on the profile (lib.sh):
#   default  the dev server (`temporal server start-dev`, SQLite, the UI built in), from the Temporal
#            CLI v1.5.1 that install.sh builds; extra `start-dev` flags can be given in TEMPORAL_DEV_ARGS;
#   cluster  the Temporal server itself on PostgreSQL with the standalone UI server (temporal-server.sh).
# Both register the platform's search attributes (infra/temporal/search-attributes.txt).
# Usage: temporal.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
temporal_port=7233/8233
TEMPORAL_GRPC_PORT=7233
TEMPORAL_UI_PORT=8233
TEMPORAL_DIR=$PLATFORM_DATA/temporal
TEMPORAL_PIDFILE=$(pidfile_of temporal)
TEMPORAL_NAMESPACE=${TEMPORAL_NAMESPACE:-default}

temporal_log() { printf '%s\n' "$PLATFORM_LOGS/temporal.log"; }

# Answering = the frontend serves a real API call for the namespace (the port opens earlier).
temporal_ready() {
  port_open 127.0.0.1 "$TEMPORAL_GRPC_PORT" &&
    "$PLATFORM_BIN/temporal" operator namespace describe --namespace "$TEMPORAL_NAMESPACE" \
      --address "127.0.0.1:$TEMPORAL_GRPC_PORT" --command-timeout 3s >/dev/null 2>&1
}

temporal_pid() {
  read_pidfile "$TEMPORAL_PIDFILE" 2>/dev/null || pids_listening "$TEMPORAL_GRPC_PORT" | head -n 1
}

# matching.useNewMatcher: the task matcher that honours task priority (off by default in server 1.29);
# file scans started during a backlog go first (docs/decisions/files.md, Scan priority).
# The history queues' read rate: the server's default (20 reads a second per queue, and the dev server
# has one shard) made every new workflow task wait for the next read, half a lone transfer's 50 ms.
# SQLite in WAL with synchronous=NORMAL: a crash of the server loses nothing; a power loss may lose
# its last commits, which a client's retry with its Idempotency-Key redoes without doubling (the
# money answer is stored in PostgreSQL). docs/decisions/temporal.md, Dev server settings.
TEMPORAL_TUNING=(
  --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000
  --dynamic-config-value history.timerProcessorMaxPollRPS=1000
  --dynamic-config-value history.visibilityProcessorMaxPollRPS=1000
)
temporal_spawn() {
  [[ -x "$PLATFORM_BIN/temporal" ]] || die "temporal: $PLATFORM_BIN/temporal missing; run scripts/infra/install.sh"
  mkdir -p "$TEMPORAL_DIR"
  # shellcheck disable=SC2086 # TEMPORAL_DEV_ARGS is a list of flags
  spawn_detached "$TEMPORAL_PIDFILE" "$(temporal_log)" \
    "$PLATFORM_BIN/temporal" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_GRPC_PORT" \
    --ui-ip 127.0.0.1 --ui-port "$TEMPORAL_UI_PORT" \
    --namespace "$TEMPORAL_NAMESPACE" \
    --db-filename "$TEMPORAL_DIR/temporal.db" \
    --log-level warn \
    --dynamic-config-value matching.useNewMatcher=true \
    "${TEMPORAL_TUNING[@]}" \
    ${TEMPORAL_DEV_ARGS:-}
}

temporal_wait() {
  WAIT_PID=$(temporal_pid) wait_until temporal "$SVC_START_TIMEOUT" "$(temporal_log)" temporal_ready
  WAIT_PID=$(temporal_pid) wait_until temporal-ui 30 "$(temporal_log)" http_ok "http://127.0.0.1:$TEMPORAL_UI_PORT/"
}

temporal_stop() {
  local pid
  if pid=$(read_pidfile "$TEMPORAL_PIDFILE"); then
    log "stopping temporal (pid $pid)"
    kill_and_wait "$pid" 20 temporal 1
  elif pid=$(pids_listening "$TEMPORAL_GRPC_PORT" | head -n 1) && [[ -n "$pid" ]]; then
    log "stopping temporal found on port $TEMPORAL_GRPC_PORT (pid $pid, no pidfile)"
    kill_and_wait "$pid" 20 temporal
  fi
  rm -f "$TEMPORAL_PIDFILE"
}

# The search attributes every workflow carries (common/temporal/search-attributes.ts), registered in
# the namespace when missing; a registration takes effect at once, on either server.
temporal_search_attributes() {
  "$PLATFORM_BIN/temporal" operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" \
    --address "127.0.0.1:$TEMPORAL_GRPC_PORT" --command-timeout 5s
}
temporal_register_search_attributes() {
  local name type present
  # A namespace just created is known to the frontend's cache some seconds after it can be described.
  wait_until "namespace $TEMPORAL_NAMESPACE's search attributes" 60 "$(temporal_log)" temporal_search_attributes
  present=$(temporal_search_attributes)
  while read -r name type; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    grep -Eq "^\s*$name\s+$type\s*$" <<<"$present" && continue
    # A type cannot be changed in place: the namespace's attribute must be removed first, by hand.
    grep -qw -- "$name" <<<"$present" && die "temporal: the search attribute $name of namespace $TEMPORAL_NAMESPACE is not a $type; remove it (temporal operator search-attribute remove --name $name) and bring the platform up again"
    log "temporal: registering the search attribute $name ($type) in namespace $TEMPORAL_NAMESPACE"
    "$PLATFORM_BIN/temporal" operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" --name "$name" \
      --type "$type" --address "127.0.0.1:$TEMPORAL_GRPC_PORT" --command-timeout 10s >/dev/null ||
      die "temporal: registering the search attribute $name failed"
  done <"$REPO_ROOT/infra/temporal/search-attributes.txt"
}
temporal_after_start() { temporal_register_search_attributes; }

# The cluster profile: the same service name, ports and readiness; the Temporal server on PostgreSQL
# behind them, and the standalone UI server, started again whenever it is down. up.sh stops the other
# profile's Temporal when the profile changes (both serve port 7233).
if [[ "$PLATFORM_PROFILE" == cluster ]]; then
  source "$(dirname "${BASH_SOURCE[0]}")/temporal-server.sh"
  temporal_log() { tserver_log; }
  temporal_pid() { tserver_pid || pids_listening "$TEMPORAL_GRPC_PORT" | head -n 1; }
  temporal_spawn() { tserver_spawn; }
  temporal_wait() { tserver_wait; }
  temporal_after_start() {
    if ! http_ok "http://127.0.0.1:$TEMPORAL_UI_PORT/"; then tserver_ui_spawn && tserver_ui_wait; fi
    temporal_register_search_attributes
  }
  temporal_stop() { tserver_ui_stop; tserver_stop; }
fi

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli temporal "$@"; fi
