#!/usr/bin/env bash
# Starts, stops and reports the external servers of the platform (native, no Docker).
#
#   scripts/infra/services.sh up     [name...]   start what is down, wait until each answers
#   scripts/infra/services.sh down   [name...]   stop (graceful, then kill after a timeout)
#   scripts/infra/services.sh status [name...]   one line per server; exit 1 when one is down
#
# Names: postgres redis temporal kafka s3 clamav mailpit, and haproxy in the cluster profile (default:
# all of the profile's, lib.sh). `up` does not install;
# services-up.sh (called by up.sh) runs install.sh first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=services

for _svc in "${PLATFORM_SERVICES[@]}"; do load_service "$_svc"; done
unset _svc

# The servers to act on, in the canonical order.
select_services() {
  local n
  if (($# == 0)); then printf '%s\n' "${PLATFORM_SERVICES[@]}"; return 0; fi
  for n in "$@"; do
    case " ${PLATFORM_SERVICES[*]} " in *" $n "*) printf '%s\n' "$n" ;; *) die "unknown server '$n' (known: ${PLATFORM_SERVICES[*]})" ;; esac
  done
}

cmd_up() {
  local names=() spawned=() failed=() n t
  mapfile -t names < <(select_services "$@")
  t=$(now_ms)
  # Spawn everything that is down first and wait afterwards, so the slow starters (the JVM of
  # Kafka, Temporal's SQLite schema set-up) overlap instead of adding up. Slowest first.
  local order=(kafka temporal s3 mailpit redis clamav postgres haproxy) late=()
  # The cluster profile's Temporal server keeps its data in PostgreSQL: it starts once PostgreSQL answers.
  [[ "$PLATFORM_PROFILE" == cluster ]] && order=(kafka s3 mailpit redis clamav postgres haproxy) && late=(temporal)
  # S3 bucket notifications to Kafka need the broker up before the gateway starts.
  [[ -n "${S3_EVENT_KAFKA_TOPIC:-}" ]] && order=("${order[@]/s3/}") && late+=(s3)
  for n in "${order[@]}"; do
    [[ " ${names[*]} " == *" $n "* ]] || continue
    if LOG_TAG=$n svc_spawn_if_down "$n"; then spawned+=("$n"); fi
  done
  for n in "${names[@]}"; do
    [[ " ${late[*]} " == *" $n "* ]] && continue
    if [[ " ${spawned[*]} " == *" $n "* ]]; then
      LOG_TAG=$n svc_wait "$n" || { failed+=("$n"); continue; }
    fi
    LOG_TAG=$n svc_after_start "$n" || failed+=("$n")
  done
  for n in "${late[@]}"; do
    [[ " ${names[*]} " == *" $n "* ]] || continue
    LOG_TAG=$n svc_start "$n" || failed+=("$n")
  done
  if ((${#failed[@]})); then
    log "ERROR: not answering: ${failed[*]}"
    for n in "${failed[@]}"; do log "  $n: log $("${n}_log")"; done
    return 1
  fi
  log "all servers answer (${names[*]}); up took $(elapsed_since "$t")"
}

cmd_down() {
  local names=() pids=() n i rc=0
  mapfile -t names < <(select_services "$@")
  # Stop in parallel (Kafka's and Temporal's graceful shutdowns take a few seconds each).
  for ((i = ${#names[@]} - 1; i >= 0; i--)); do
    n=${names[i]}
    (LOG_TAG=$n svc_stop "$n") &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  log "stopped: ${names[*]}"
  return $rc
}

cmd_status() {
  local names=() n rc=0
  mapfile -t names < <(select_services "$@")
  printf '%-17s %-12s %-5s %s\n' NAME PORT STATE PID
  for n in "${names[@]}"; do svc_status_line "$n" || rc=1; done
  return $rc
}

case "${1:-}" in
  up | down | status) cmd=$1; shift; "cmd_$cmd" "$@" ;;
  *) echo "usage: $0 up|down|status [${PLATFORM_SERVICES[*]}]" >&2; exit 2 ;;
esac
