# shellcheck shell=bash
# shellcheck disable=SC2034 # variables here are used by the scripts that source this file
# Shared helpers for the native infrastructure scripts. Source it; do not run it.
#
#   PLATFORM_CACHE  built/downloaded things that survive a data wipe (bin/, kafka/libs, ...)
#   PLATFORM_DATA   state of each server (databases, Kafka log dirs, pidfiles)
#   PLATFORM_LOGS   the ONE folder every server and background process logs into
#
# Nothing here is written inside the work tree: the repo only holds the scripts.

set -euo pipefail

# Guard against double sourcing (services/*.sh source this too).
if [[ -n "${_PLATFORM_LIB_LOADED:-}" ]]; then return 0; fi
_PLATFORM_LIB_LOADED=1

INFRA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$INFRA_DIR/../.." && pwd)

export PLATFORM_CACHE=${PLATFORM_CACHE:-$HOME/.cache/platform}
export PLATFORM_DATA=${PLATFORM_DATA:-$PLATFORM_CACHE/data}
export PLATFORM_LOGS=$PLATFORM_DATA/logs
export PLATFORM_BIN=$PLATFORM_CACHE/bin
# pidfiles of everything we start; app/ holds the Node processes started with start_bg.
export PLATFORM_RUN=$PLATFORM_DATA/run

# Our own binaries first, so `temporal`, `versitygw`, `mailpit` resolve to the pinned builds.
case ":$PATH:" in *":$PLATFORM_BIN:"*) ;; *) export PATH="$PLATFORM_BIN:$PATH" ;; esac

mkdir -p "$PLATFORM_CACHE" "$PLATFORM_DATA" "$PLATFORM_LOGS" "$PLATFORM_BIN" "$PLATFORM_RUN" "$PLATFORM_RUN/app"

# ---------------------------------------------------------------------------------------------
# Logging
# ---------------------------------------------------------------------------------------------

# log MESSAGE...  -> "12:34:56 [tag] message" on stderr (stdout stays free for data, e.g. status).
log() { printf '%s [%s] %s\n' "$(date +%H:%M:%S)" "${LOG_TAG:-infra}" "$*" >&2; }
warn() { log "WARNING: $*"; }
die() { log "ERROR: $*"; exit 1; }

# now_ms: wall clock in milliseconds, for the timings we print.
now_ms() { date +%s%3N; }

# elapsed_since START_MS -> "1.234s"
elapsed_since() {
  local ms=$(($(now_ms) - $1))
  printf '%d.%03ds' $((ms / 1000)) $((ms % 1000))
}

# show_log_tail FILE [LINES]: what went wrong is usually in the last lines of the server's log.
show_log_tail() {
  local file=$1 lines=${2:-25}
  if [[ -f "$file" ]]; then
    log "last $lines lines of $file:"
    tail -n "$lines" "$file" | sed 's/^/    | /' >&2
  else
    log "(log file $file does not exist)"
  fi
}

# run_with_progress LABEL LOGFILE CMD...: runs a long command with its output in LOGFILE, printing a
# dot every 5 s and the elapsed time every minute, so a slow cold install never looks hung.
run_with_progress() {
  local label=$1 logfile=$2
  shift 2
  local start pid rc=0 n=0
  start=$(now_ms)
  log "$label (log: $logfile)"
  "$@" >>"$logfile" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    if ((n % 60 == 0)); then printf ' %dm ' $((n / 60)) >&2; elif ((n % 5 == 0)); then printf '.' >&2; fi
  done
  wait "$pid" || rc=$?
  ((n >= 5)) && printf '\n' >&2
  if ((rc != 0)); then
    log "$label FAILED (exit $rc) after $(elapsed_since "$start")"
    show_log_tail "$logfile" 30
    return "$rc"
  fi
  log "$label done in $(elapsed_since "$start")"
}

# ---------------------------------------------------------------------------------------------
# Probes and waiting
# ---------------------------------------------------------------------------------------------

# port_open HOST PORT: true when something accepts TCP connections there (bash's /dev/tcp, no nc needed).
port_open() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# log_says LOG OFFSET PATTERN: LOG has PATTERN past byte OFFSET (what the current start wrote); a
# log that shrank below OFFSET was rotated, so it is read whole. grep -q stops at the first match:
# in a `tail | grep -q` pipeline tail then dies of SIGPIPE once more than a pipe buffer of log
# follows the match, and pipefail turns the match into a failure. Reading tail through a process
# substitution keeps its exit status out of the answer.
log_says() {
  local offset=$2 size
  size=$(stat -c %s "$1" 2>/dev/null || echo 0)
  ((size < offset)) && offset=0
  grep -q -- "$3" < <(tail -c +"$((offset + 1))" "$1" 2>/dev/null)
}

# wait_until NAME TIMEOUT_S LOGFILE CHECK_CMD...: polls CHECK_CMD every 0.25 s, printing a dot per
# second. On timeout it fails with a message naming the component and its log file.
# Optional: WAIT_PID=<pid> aborts early (with the log tail) when that process dies meanwhile.
wait_until() {
  local name=$1 timeout_s=$2 logfile=$3
  shift 3
  local start deadline ticks=0 dotted=0
  start=$(now_ms)
  deadline=$((start + timeout_s * 1000))
  while ! "$@" >/dev/null 2>&1; do
    if [[ -n "${WAIT_PID:-}" ]] && ! kill -0 "$WAIT_PID" 2>/dev/null; then
      ((dotted)) && printf '\n' >&2
      log "ERROR: $name: its process (pid $WAIT_PID) exited before it answered. Log: $logfile"
      show_log_tail "$logfile"
      return 1
    fi
    if (($(now_ms) >= deadline)); then
      ((dotted)) && printf '\n' >&2
      log "ERROR: $name did not answer within ${timeout_s}s. Look at its log: $logfile"
      show_log_tail "$logfile"
      return 1
    fi
    if ((ticks == 0)); then printf '%s [%s] waiting for %s ' "$(date +%H:%M:%S)" "${LOG_TAG:-infra}" "$name" >&2; dotted=1; fi
    ticks=$((ticks + 1))
    ((ticks % 4 == 0)) && printf '.' >&2
    sleep 0.25
  done
  ((dotted)) && printf '\n' >&2
  log "$name answers (after $(elapsed_since "$start"))"
}

# wait_for_port NAME HOST PORT TIMEOUT_S LOGFILE
wait_for_port() { wait_until "$1" "$4" "$5" port_open "$2" "$3"; }

# http_ok URL: true when URL answers 2xx.
http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }

# ---------------------------------------------------------------------------------------------
# Pidfiles
# ---------------------------------------------------------------------------------------------

pidfile_of() { printf '%s/%s.pid\n' "$PLATFORM_RUN" "$1"; }

# pid_alive PID: the process exists and is not a zombie (a killed server whose parent has not
# reaped it yet still answers kill -0).
pid_alive() {
  [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }
  [[ "${stat:0:1}" != Z ]]
}

# started_after PID FILE: the process began after FILE was last written, so FILE cannot be its
# pidfile: after a reboot (or once pids wrap) a stale pidfile's number can belong to anything, a
# kernel thread even. The start time is the boot time plus /proc's clock ticks since boot, which a
# step of the wall clock after the write would shift: a minute's slack keeps a clock corrected by
# NTP from making a live server's pidfile look stale (and its server unstoppable).
started_after() {
  local pid=$1 file=$2 stat boot ticks fields
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  read -r -a fields <<<"$stat"
  boot=$(awk '$1 == "btime" { print $2 }' /proc/stat)
  ticks=$(getconf CLK_TCK)
  (( boot + ${fields[19]} / ticks > $(stat -c %Y "$file") + 60 ))
}

# read_pidfile FILE: prints the pid when the file names a live process it was written for; removes
# a stale file (left behind by kill -9 or a reboot) so it cannot confuse the next start.
read_pidfile() {
  local file=$1 pid
  [[ -f "$file" ]] || return 1
  pid=$(tr -dc '0-9' <"$file")
  if pid_alive "$pid" && ! started_after "$pid" "$file"; then
    printf '%s\n' "$pid"
    return 0
  fi
  rm -f "$file"
  return 1
}

# kill_and_wait PID TIMEOUT_S [LABEL] [GROUP]: SIGTERM, wait, then SIGKILL. GROUP=1 signals the
# whole process group (for processes we started with setsid, so their children go too).
kill_and_wait() {
  local pid=$1 timeout_s=${2:-20} label=${3:-pid $1} group=${4:-0} target i
  target=$pid
  ((group)) && target=-$pid
  pid_alive "$pid" || return 0
  kill -TERM -- "$target" 2>/dev/null || true
  for ((i = 0; i < timeout_s * 4; i++)); do
    pid_alive "$pid" || return 0
    sleep 0.25
  done
  warn "$label did not stop within ${timeout_s}s after SIGTERM; sending SIGKILL"
  kill -KILL -- "$target" 2>/dev/null || true
  for ((i = 0; i < 20; i++)); do
    pid_alive "$pid" || return 0
    sleep 0.25
  done
  warn "$label (pid $pid) is still alive after SIGKILL"
  return 1
}

# stop_pidfile FILE TIMEOUT_S LABEL [GROUP]: stop what a pidfile names, then remove the file.
stop_pidfile() {
  local file=$1 timeout_s=$2 label=$3 group=${4:-0} pid
  if pid=$(read_pidfile "$file"); then
    log "stopping $label (pid $pid)"
    kill_and_wait "$pid" "$timeout_s" "$label" "$group"
  fi
  rm -f "$file"
}

# stop_server NAME GRACE_S: stops the server that NAME_pid finds (its pidfile, or the process on its
# port), waiting GRACE_S for a clean exit before killing it, then forgets its pidfile.
stop_server() {
  local name=$1 grace_s=$2 pid
  if pid=$("${name}_pid") && [[ -n "$pid" ]]; then
    log "stopping $name (pid $pid)"
    kill_and_wait "$pid" "$grace_s" "$name"
  fi
  rm -f "$(pidfile_of "$name")"
}

# pids_listening PORT: pids of processes with a listening TCP socket on PORT (via /proc, as ss -p
# needs iproute2 and lsof may be missing). Used to find servers whose pidfile was lost.
pids_listening() {
  local port=$1 hexport inodes pid fd link
  hexport=$(printf '%04X' "$port")
  # st 0A = LISTEN; field 10 = socket inode.
  inodes=$(awk -v p=":$hexport" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
  [[ -n "$inodes" ]] || return 0
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    for fd in /proc/"$pid"/fd/*; do
      link=$(readlink "$fd" 2>/dev/null) || continue
      case "$link" in socket:\[*\])
        if grep -qx "${link//[^0-9]/}" <<<"$inodes"; then printf '%s\n' "$pid"; break; fi ;;
      esac
    done
  done | sort -u
}

# ---------------------------------------------------------------------------------------------
# Background processes (for the lead's Node processes: API gateway, worker, outbox relay)
# ---------------------------------------------------------------------------------------------

# start_bg NAME LOGFILE CMD...: starts CMD detached (own session, survives the calling shell),
# stdout+stderr appended to LOGFILE, pid in $PLATFORM_RUN/app/NAME.pid. Does nothing when NAME is
# already running. A relative LOGFILE is taken inside $PLATFORM_LOGS.
# The pid is written by the child itself before exec, so it is the real process, not a wrapper.
start_bg() {
  local name=$1 logfile=$2 pidfile pid
  shift 2
  [[ "$logfile" == /* ]] || logfile=$PLATFORM_LOGS/$logfile
  pidfile=$PLATFORM_RUN/app/$name.pid
  if pid=$(read_pidfile "$pidfile"); then
    log "$name already running (pid $pid)"
    return 0
  fi
  spawn_detached "$pidfile" "$logfile" "$@"
  log "$name started (pid $(cat "$pidfile" 2>/dev/null || echo '?'), log $logfile)"
}

# spawn_detached PIDFILE LOGFILE CMD...: the common part of start_bg and the servers we run
# ourselves: own session (setsid: a Ctrl-C or the end of the calling shell does not kill it, and
# the whole group can be signalled), output appended to LOGFILE with a banner, pid written by the
# child itself right before exec so it is the server's pid and not a wrapper's.
spawn_detached() {
  local pidfile=$1 logfile=$2 i
  shift 2
  mkdir -p "$(dirname "$logfile")" "$(dirname "$pidfile")"
  rm -f "$pidfile"
  printf '\n==== %s starting: %s\n' "$(date -Is)" "$*" >>"$logfile"
  nohup setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidfile" "$@" >>"$logfile" 2>&1 </dev/null &
  for ((i = 0; i < 100; i++)); do [[ -s "$pidfile" ]] && break; sleep 0.02; done
  [[ -s "$pidfile" ]] || warn "no pid written to $pidfile yet"
}

# stop_bg NAME [TIMEOUT_S]: SIGTERM to the process group, SIGKILL after TIMEOUT_S (default 15).
stop_bg() {
  local name=$1 timeout_s=${2:-15}
  stop_pidfile "$PLATFORM_RUN/app/$name.pid" "$timeout_s" "$name" 1
}

# bg_pid NAME: prints the pid when NAME runs.
bg_pid() { read_pidfile "$PLATFORM_RUN/app/$1.pid"; }

# stop_all_bg: stops every process started with start_bg (down.sh calls it before the servers,
# so the lead does not have to list the app processes twice).
stop_all_bg() {
  local f
  for f in "$PLATFORM_RUN"/app/*.pid; do
    [[ -e "$f" ]] || continue
    stop_bg "$(basename "$f" .pid)"
  done
}

# app_port NAME: what status prints in the port column for an app process (a gateway's HTTP/gRPC).
app_port() {
  case "$1" in
    api) printf '%s/%s\n' "${API_PORT:-8080}" "${GRPC_PORT:-50051}" ;;
    api-*) printf '%s/%s\n' "$(gateway_http_port "${1#api-}")" "$(gateway_grpc_port "${1#api-}")" ;;
    *) printf -- '-\n' ;;
  esac
}

# status_all_bg: one status line per app process known by a pidfile.
status_all_bg() {
  local f name pid
  for f in "$PLATFORM_RUN"/app/*.pid; do
    [[ -e "$f" ]] || continue
    name=$(basename "$f" .pid)
    if pid=$(read_pidfile "$f"); then
      printf '%-17s %-12s %-5s pid=%s\n' "$name" "$(app_port "$name")" "up" "$pid"
    else
      printf '%-17s %-12s %-5s pid=%s\n' "$name" "$(app_port "$name")" "down" "-"
    fi
  done
}

# ---------------------------------------------------------------------------------------------
# Small file helpers
# ---------------------------------------------------------------------------------------------

# write_if_changed FILE: writes stdin to FILE only when the content differs; returns 0 when it
# changed the file, 1 when it was already up to date (lets callers restart only when needed).
write_if_changed() {
  local file=$1 tmp
  mkdir -p "$(dirname "$file")"
  tmp=$(mktemp "$file.XXXXXX")
  cat >"$tmp"
  # mktemp makes 0600 files; config files must stay readable by servers running as other users.
  chmod 0644 "$tmp"
  if [[ -f "$file" ]] && cmp -s "$tmp" "$file"; then
    rm -f "$tmp"
    return 1
  fi
  mv -f "$tmp" "$file"
  return 0
}

# ---------------------------------------------------------------------------------------------
# Profiles: the topology, the same code (docs/operations.md)
#   default  one gateway, worker, relay and audit consumer; Temporal's dev server (laptops, CI)
#   cluster  CLUSTER_REPLICAS of each behind HAProxy; the Temporal server on PostgreSQL
# up.sh takes the profile from --cluster (or PLATFORM_PROFILE) and records it, so status and down
# act on what runs.
# ---------------------------------------------------------------------------------------------
PLATFORM_PROFILE_FILE=$PLATFORM_RUN/profile
recorded_profile() { cat "$PLATFORM_PROFILE_FILE" 2>/dev/null || echo default; }
export PLATFORM_PROFILE=${PLATFORM_PROFILE:-$(recorded_profile)}
case "$PLATFORM_PROFILE" in default | cluster) ;; *) die "unknown profile '$PLATFORM_PROFILE' (known: default, cluster)" ;; esac
CLUSTER_REPLICAS=2

# The ports of gateway replica N (1, 2, ...) in the cluster profile; the balancer keeps 8080 and 50051.
gateway_http_port() { printf '%d\n' $((8080 + $1)); }
gateway_grpc_port() { printf '%d\n' $((50051 + $1)); }

# Names of the servers in the order they are started and listed.
PLATFORM_SERVICES=(postgres redis temporal kafka s3 clamav mailpit)
[[ "$PLATFORM_PROFILE" == cluster ]] && PLATFORM_SERVICES+=(haproxy)

# load_service NAME: sources scripts/infra/services/NAME.sh (defines NAME_start/stop/status...).
load_service() {
  local f=$INFRA_DIR/services/$1.sh
  [[ -f "$f" ]] || die "unknown service '$1' (no $f)"
  # shellcheck source=/dev/null
  source "$f"
}

# ---------------------------------------------------------------------------------------------
# Generic server driver. Each scripts/infra/services/NAME.sh defines:
#   NAME_port            what status prints in the port column (e.g. "5432", "1025/8025")
#   NAME_log             prints the path of its main log file
#   NAME_ready           true when the server answers a real request (not only an open port)
#   NAME_pid             prints its pid (empty when unknown)
#   NAME_spawn           starts it in the background (a running server is never passed here)
#   NAME_wait            blocks until NAME_ready or fails naming the log (default: wait_until)
#   NAME_after_start     optional; idempotent set-up once it answers (postgres roles and databases)
#   NAME_stop            graceful stop, then kill after a timeout
# and ends with `svc_cli NAME "$@"` so it also works as `services/NAME.sh start|stop|status`.
# ---------------------------------------------------------------------------------------------

# Seconds each server may take to answer after being started.
SVC_START_TIMEOUT=${SVC_START_TIMEOUT:-90}

svc_has() { declare -F "$1_$2" >/dev/null; }

# svc_port NAME: the value of NAME_port.
svc_port() { local v="${1}_port"; printf '%s' "${!v:-?}"; }

# svc_spawn_if_down NAME: returns 0 when it started something (the caller then has to wait).
svc_spawn_if_down() {
  local n=$1 pid
  if "${n}_ready" >/dev/null 2>&1; then
    pid=$("${n}_pid" 2>/dev/null || true)
    log "$n already up (port $(svc_port "$n"), pid ${pid:-?}); left alone"
    return 1
  fi
  log "starting $n (log: $("${n}_log"))"
  "${n}_spawn"
  return 0
}

# svc_wait NAME: wait until it answers, then run its after_start step.
svc_wait() {
  local n=$1
  if svc_has "$n" wait; then
    "${n}_wait"
  else
    WAIT_PID=$("${n}_pid" 2>/dev/null || true) wait_until "$n" "$SVC_START_TIMEOUT" "$("${n}_log")" "${n}_ready"
  fi
}

svc_after_start() {
  local n=$1
  if svc_has "$n" after_start; then "${n}_after_start"; fi
}

# svc_start NAME: start (if down), wait, set up.
svc_start() {
  local n=$1 t
  t=$(now_ms)
  if svc_spawn_if_down "$n"; then
    svc_wait "$n"
    log "$n started in $(elapsed_since "$t")"
  fi
  svc_after_start "$n"
}

svc_stop() { "${1}_stop"; }

# svc_status_line NAME: "name  port  up|down  pid=N"; returns 1 when down.
svc_status_line() {
  local n=$1 pid port
  port=$(svc_port "$n")
  pid=$("${n}_pid" 2>/dev/null || true)
  if "${n}_ready" >/dev/null 2>&1; then
    printf '%-17s %-12s %-5s pid=%s\n' "$n" "$port" "up" "${pid:--}"
  else
    printf '%-17s %-12s %-5s pid=%s\n' "$n" "$port" "down" "${pid:--}"
    return 1
  fi
}

# svc_cli NAME ARGS...: the command-line face of a services/NAME.sh file when it is run directly.
svc_cli() {
  local n=$1
  shift
  local LOG_TAG=$n
  case "${1:-status}" in
    start) svc_start "$n" ;;
    stop) svc_stop "$n" ;;
    restart) svc_stop "$n"; svc_start "$n" ;;
    status) svc_status_line "$n" ;;
    *) echo "usage: $0 start|stop|restart|status" >&2; return 2 ;;
  esac
}
