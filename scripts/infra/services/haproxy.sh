#!/usr/bin/env bash
# The cluster profile's load balancer: HAProxy (Debian's package) in front of the gateways,
#   HTTP  127.0.0.1:8080  -> each gateway's HTTP port          (gateway_http_port in lib.sh)
#   gRPC  127.0.0.1:50051 -> each gateway's EventService, HTTP/2 on both sides
#   127.0.0.1:8404        /stats (the servers' states), /metrics (Prometheus), /health (HAProxy itself)
# A gateway is taken out once its /ready fails twice a second apart and put back after two passes;
# what HAProxy does when a gateway dies is explained beside each setting (docs/operations.md).
# Usage: haproxy.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
haproxy_port=8080/50051
HAPROXY_DIR=$PLATFORM_DATA/haproxy
HAPROXY_CONF=$HAPROXY_DIR/haproxy.cfg
HAPROXY_PIDFILE=$(pidfile_of haproxy)
HAPROXY_STATS_PORT=8404

haproxy_log() { printf '%s\n' "$PLATFORM_LOGS/haproxy.log"; }
haproxy_ready() { http_ok "http://127.0.0.1:$HAPROXY_STATS_PORT/health"; }
haproxy_pid() { read_pidfile "$HAPROXY_PIDFILE" 2>/dev/null || pids_listening "$HAPROXY_STATS_PORT" | head -n 1; }

# One server line per gateway replica.
haproxy_servers() {
  local kind=$1 i
  for ((i = 1; i <= CLUSTER_REPLICAS; i++)); do
    if [[ $kind == http ]]; then
      printf '  server api-%d 127.0.0.1:%d check\n' "$i" "$(gateway_http_port "$i")"
    else
      # The EventService speaks HTTP/2 only; its health is the same gateway's /ready, over HTTP/1.1.
      printf '  server api-%d 127.0.0.1:%d proto h2 check port %d check-proto h1\n' \
        "$i" "$(gateway_grpc_port "$i")" "$(gateway_http_port "$i")"
    fi
  done
}

haproxy_config() {
  mkdir -p "$HAPROXY_DIR"
  write_if_changed "$HAPROXY_CONF" <<EOF
# Written by scripts/infra/services/haproxy.sh for the cluster profile; edits are overwritten.
global
  maxconn 4000
  log stdout format raw local0 info
  stats socket $HAPROXY_DIR/admin.sock mode 600 level admin

defaults
  log global
  mode http
  option httplog
  option dontlognull
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout check 2s
  # Health: /ready every second; two failures take a gateway out, two passes put it back. A connection
  # refused takes it out at once (a dead gateway would otherwise get requests until its next checks).
  default-server inter 1s fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down
  # A refused connection (a gateway that stopped or died) is tried again, on the other gateway.
  retries 3
  option redispatch 1

frontend http
  bind 127.0.0.1:8080
  # A gateway's /metrics carries tenant ids in its labels: the scraper reads each gateway's own port,
  # and clients never reach it through the balancer (docs/security.md, 4.3.2).
  http-request deny deny_status 404 if { path /metrics } || { path_beg /metrics/ }
  default_backend gateways

backend gateways
  # Round robin, not least connections: a dead gateway has the fewest connections of all, so a retry
  # would pick it again.
  balance roundrobin
  option httpchk GET /ready
  http-check expect status 200
  # The client's address reaches the gateway, which trusts it from this proxy only (TRUSTED_PROXIES).
  option forwardfor
  # A request whose connection broke before any answer (a gateway killed mid-request) may already have
  # had its effect: it is sent again to the other gateway only where repeating it is safe, a method HTTP
  # calls idempotent, or a POST or PATCH with an Idempotency-Key, which the platform answers once.
  retry-on conn-failure empty-response
  http-request disable-l7-retry if { method POST PATCH } !{ req.hdr(idempotency-key) -m found }
$(haproxy_servers http)

frontend grpc
  bind 127.0.0.1:50051 proto h2
  # EventService subscriptions are long streams: only an hour of silence ends one.
  timeout client 1h
  default_backend grpc_gateways

backend grpc_gateways
  balance leastconn
  timeout server 1h
  option httpchk GET /ready
  http-check expect status 200
$(haproxy_servers grpc)

listen stats
  bind 127.0.0.1:$HAPROXY_STATS_PORT
  monitor-uri /health
  http-request use-service prometheus-exporter if { path /metrics }
  stats enable
  stats uri /stats
  stats refresh 5s
EOF
}

haproxy_spawn() {
  command -v haproxy >/dev/null || die "haproxy: not installed; run scripts/infra/install.sh haproxy"
  haproxy_config || true
  haproxy -c -q -f "$HAPROXY_CONF" || die "haproxy: $HAPROXY_CONF is not valid (see above)"
  # -db: in the foreground (spawn_detached keeps its pid and log); -W: master-worker, so it survives its worker.
  spawn_detached "$HAPROXY_PIDFILE" "$(haproxy_log)" haproxy -W -db -f "$HAPROXY_CONF"
}

# A running HAProxy whose configuration changed (another number of replicas) is restarted.
haproxy_after_start() {
  if haproxy_config; then
    log "haproxy: configuration changed; restarting"
    haproxy_stop
    haproxy_spawn
    WAIT_PID=$(haproxy_pid) wait_until haproxy 30 "$(haproxy_log)" haproxy_ready
  fi
}

haproxy_stop() {
  local pid
  if pid=$(haproxy_pid) && [[ -n "$pid" ]]; then
    log "stopping haproxy (pid $pid)"
    kill_and_wait "$pid" 10 haproxy 1
  fi
  rm -f "$HAPROXY_PIDFILE"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli haproxy "$@"; fi
