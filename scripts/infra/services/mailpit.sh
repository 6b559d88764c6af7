#!/usr/bin/env bash
# Mailpit: SMTP sink on 127.0.0.1:1025, HTTP API/UI on http://127.0.0.1:8025 (tests read mail
# through /api/v1/...). Binary: $PLATFORM_CACHE/bin/mailpit (v1.30.5, installed by install.sh).
# Usage: mailpit.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # read by svc_port in lib.sh
mailpit_port=1025/8025
MAILPIT_SMTP_PORT=1025
MAILPIT_HTTP_PORT=8025
MAILPIT_DIR=$PLATFORM_DATA/mailpit
MAILPIT_PIDFILE=$(pidfile_of mailpit)

mailpit_log() { printf '%s\n' "$PLATFORM_LOGS/mailpit.log"; }

mailpit_ready() {
  http_ok "http://127.0.0.1:$MAILPIT_HTTP_PORT/api/v1/info" && port_open 127.0.0.1 "$MAILPIT_SMTP_PORT"
}

mailpit_pid() { read_pidfile "$MAILPIT_PIDFILE" 2>/dev/null || pids_listening "$MAILPIT_SMTP_PORT" | head -n 1; }

mailpit_spawn() {
  [[ -x "$PLATFORM_BIN/mailpit" ]] || die "mailpit: $PLATFORM_BIN/mailpit missing; run scripts/infra/install.sh"
  mkdir -p "$MAILPIT_DIR"
  # --smtp-auth-accept-any/--smtp-auth-allow-insecure: a client configured with credentials
  #   (as in production) still delivers here without TLS.
  # --max 5000: keep more than the default 500 messages, test suites send many.
  # --disable-version-check: no network lookups (none is possible here anyway).
  spawn_detached "$MAILPIT_PIDFILE" "$(mailpit_log)" \
    "$PLATFORM_BIN/mailpit" \
    --smtp "127.0.0.1:$MAILPIT_SMTP_PORT" \
    --listen "127.0.0.1:$MAILPIT_HTTP_PORT" \
    --database "$MAILPIT_DIR/mailpit.db" \
    --smtp-auth-accept-any --smtp-auth-allow-insecure \
    --max 5000 \
    --disable-version-check
}

mailpit_stop() { stop_server mailpit 10; }

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli mailpit "$@"; fi
