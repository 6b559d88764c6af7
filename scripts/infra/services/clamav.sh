#!/usr/bin/env bash
# ClamAV daemon (clamd) on 127.0.0.1:3310 with our own config in $PLATFORM_DATA/clamav/clamd.conf.
# Signatures: $PLATFORM_CACHE/clamav-db, prepared by install.sh (the official database when it
# can be had, otherwise a local one that detects the EICAR test file).
# Usage: clamav.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
clamav_port=3310
CLAMAV_DIR=$PLATFORM_DATA/clamav
CLAMAV_CONF=$CLAMAV_DIR/clamd.conf
CLAMAV_DB=$PLATFORM_CACHE/clamav-db
CLAMAV_PIDFILE=$(pidfile_of clamav)

clamav_log() { printf '%s\n' "$PLATFORM_LOGS/clamd.log"; }

# clamd_cmd COMMAND: sends a clamd "z" command (NUL-terminated) and prints the answer.
clamd_cmd() {
  timeout 5 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "z%s\0" "$2" >&3
    tr -d "\0" <&3' _ "$clamav_port" "$1" 2>/dev/null
}

clamav_ready() { [[ "$(clamd_cmd PING)" == PONG ]]; }

clamav_pid() { read_pidfile "$CLAMAV_PIDFILE" 2>/dev/null || pids_listening "$clamav_port" | head -n 1; }

clamav_write_conf() {
  mkdir -p "$CLAMAV_DIR/tmp"
  write_if_changed "$CLAMAV_CONF" <<EOC || true
# Written by scripts/infra/services/clamav.sh
TCPSocket $clamav_port
TCPAddr 127.0.0.1
DatabaseDirectory $CLAMAV_DB
LogFile $(clamav_log)
LogTime yes
LogFileMaxSize 20M
LogRotate yes
PidFile $CLAMAV_PIDFILE
TemporaryDirectory $CLAMAV_DIR/tmp
# clamd forks into the background once the database is loaded, so "started" means "loaded".
Foreground no
# Run as the user that started it (root here): the database and log live under root's home.
User root
# Uploads up to 100 MB are scanned through INSTREAM.
StreamMaxLength 100M
MaxFileSize 100M
MaxScanSize 400M
# One copy of the database in memory (the test database is tiny, the official one is not).
ConcurrentDatabaseReload no
EOC
}

clamav_spawn() {
  [[ -n "$(ls -A "$CLAMAV_DB" 2>/dev/null)" ]] || die "clamav: no signatures in $CLAMAV_DB; run scripts/infra/install.sh"
  clamav_write_conf
  rm -f "$CLAMAV_PIDFILE"
  # clamd returns once it has daemonized (after loading the signatures).
  clamd --config-file="$CLAMAV_CONF" >>"$(clamav_log)" 2>&1 ||
    { show_log_tail "$(clamav_log)"; die "clamav: clamd failed to start. Log: $(clamav_log)"; }
}

clamav_stop() {
  clamd_cmd SHUTDOWN >/dev/null 2>&1 || true
  stop_server clamav 15
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli clamav "$@"; fi
