#!/usr/bin/env bash
# Redis on 127.0.0.1:6379: rate-limit counters and shared caches (the `cache` health component).
# Daemonized by redis-server itself; config, data and pidfile under PLATFORM_DATA.
# A redis already answering PING on 6379 (e.g. started by Debian's package) is accepted as is.
# TLS beside it on 6380 with the local CA's certificate (scripts/infra/tls.sh): rediss://127.0.0.1:6380
# with REDIS_TLS_CA_FILE=$PLATFORM_DATA/tls/ca.crt; clients need no certificate of their own.
# Usage: redis.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../tls.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
redis_port=6379
REDIS_TLS_PORT=6380
REDIS_DIR=$PLATFORM_DATA/redis
REDIS_CONF=$REDIS_DIR/redis.conf
REDIS_PIDFILE=$(pidfile_of redis)

redis_log() { printf '%s\n' "$PLATFORM_LOGS/redis.log"; }

redis_ready() { [[ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" == PONG ]]; }

# The TLS port answers a client that verifies the certificate against the local CA.
_redis_tls_ready() {
  [[ "$(redis-cli --tls --cacert "$TLS_CA_CERT" -h 127.0.0.1 -p "$REDIS_TLS_PORT" ping 2>/dev/null)" == PONG ]]
}

redis_pid() {
  read_pidfile "$REDIS_PIDFILE" 2>/dev/null && return 0
  # Started by someone else (no pidfile of ours): ask the server itself.
  redis-cli -h 127.0.0.1 -p "$redis_port" info server 2>/dev/null | awk -F: '/^process_id:/ { sub(/\r/, "", $2); print $2 }'
}

redis_spawn() {
  mkdir -p "$REDIS_DIR"
  # Redis runs as this user, so it reads the key where tls.sh keeps it.
  tls_server_cert
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
# TLS for rediss:// clients; they verify the server, the server asks them for no certificate.
tls-port $REDIS_TLS_PORT
tls-cert-file $(tls_cert_of "$TLS_SERVER_NAME")
tls-key-file $(tls_key_of "$TLS_SERVER_NAME")
tls-ca-cert-file $TLS_CA_CERT
tls-auth-clients no
EOC
  rm -f "$REDIS_PIDFILE"
  redis-server "$REDIS_CONF" || die "redis: redis-server failed to start. Log: $(redis_log)"
}

# A redis of ours without the TLS port (started before this script configured it) is restarted
# with it: it keeps counters and caches only, which nothing needs across a restart. A redis someone
# else started is left alone, without TLS.
redis_after_start() {
  _redis_tls_ready && return 0
  if [[ -z "$(read_pidfile "$REDIS_PIDFILE" 2>/dev/null)" ]]; then
    warn "redis on $redis_port was not started by this script: no TLS on $REDIS_TLS_PORT (the TLS tests will fail)"
    return 0
  fi
  log "redis: TLS port $REDIS_TLS_PORT does not answer; restarting with $REDIS_CONF"
  redis_stop
  redis_spawn
  wait_until "redis TLS port" 30 "$(redis_log)" _redis_tls_ready
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
