#!/usr/bin/env bash
# Temporal dev server (the real server, SQLite persistence, with the Web UI):
# gRPC 127.0.0.1:7233, UI http://127.0.0.1:8233, namespace `default`.
# Binary: $PLATFORM_CACHE/bin/temporal (Temporal CLI v1.5.1, installed by install.sh).
# Extra `start-dev` flags (e.g. --search-attribute TenantId=Keyword) can be given in
# TEMPORAL_DEV_ARGS.
# Usage: temporal.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
temporal_port=7233/8233
TEMPORAL_GRPC_PORT=7233
TEMPORAL_UI_PORT=8233
TEMPORAL_DIR=$PLATFORM_DATA/temporal
TEMPORAL_PIDFILE=$(pidfile_of temporal)

temporal_log() { printf '%s\n' "$PLATFORM_LOGS/temporal.log"; }

# Answering = the frontend serves a real API call for the namespace (the port opens earlier).
temporal_ready() {
  port_open 127.0.0.1 "$TEMPORAL_GRPC_PORT" &&
    "$PLATFORM_BIN/temporal" operator namespace describe --namespace default \
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
    --namespace default \
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

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli temporal "$@"; fi
