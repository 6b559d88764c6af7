#!/usr/bin/env bash
# Redis on 127.0.0.1:6379: rate-limit counters and shared caches (the `cache` health component).
# Daemonized by redis-server itself; config, data and pidfile under PLATFORM_DATA.
# A redis already answering PING on 6379 (e.g. started by Debian's package) is accepted as is.
# Usage: redis.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
redis_port=6379
REDIS_DIR=$PLATFORM_DATA/redis
REDIS_CONF=$REDIS_DIR/redis.conf
REDIS_PIDFILE=$(pidfile_of redis)

redis_log() { printf '%s\n' "$PLATFORM_LOGS/redis.log"; }

redis_ready() { [[ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" == PONG ]]; }

redis_pid() {
  read_pidfile "$REDIS_PIDFILE" 2>/dev/null && return 0
  # Started by someone else (no pidfile of ours): ask the server itself.
  redis-cli -h 127.0.0.1 -p "$redis_port" info server 2>/dev/null | awk -F: '/^process_id:/ { sub(/\r/, "", $2); print $2 }'
}

redis_spawn() {
  mkdir -p "$REDIS_DIR"
  write_if_changed "$REDIS_CONF" <<EOC || true
# Written by scripts/infra/services/redis.sh
bind 127.0.0.1
port $redis_port
protected-mode yes
daemonize yes
pidfile $REDIS_PIDFILE
logfile $(redis_log)
dir $REDIS_DIR
# Counters and caches only: nothing here must survive a restart, so no RDB/AOF (no fork pauses).
save ""
appendonly no
EOC
  rm -f "$REDIS_PIDFILE"
  redis-server "$REDIS_CONF" || die "redis: redis-server failed to start. Log: $(redis_log)"
}

redis_stop() {
  redis_ready || { rm -f "$REDIS_PIDFILE"; return 0; }
  local pid
  pid=$(redis_pid || true)
  log "stopping redis${pid:+ (pid $pid)}"
  redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  [[ -n "$pid" ]] && kill_and_wait "$pid" 10 redis
  rm -f "$REDIS_PIDFILE"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli redis "$@"; fi
