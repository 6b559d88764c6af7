#!/usr/bin/env bash
# PostgreSQL 15 on 127.0.0.1:5432: Debian's cluster 15/main, managed with pg_ctlcluster.
# The data stays where Debian keeps it (/var/lib/postgresql/15/main); the postgres OS user
# cannot write under /root, so PLATFORM_LOGS/postgres.log is a symlink to Debian's log file.
# Roles and databases come from infra/postgres/init.sql (shared with docker-compose.yml).
# TLS is on with the local CA's certificate (scripts/infra/tls.sh) beside plain connections: each
# client chooses (DATABASE_SSL_MODE); pg_hba's `host` lines match both.
# Usage: postgres.sh start|stop|restart|status
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../tls.sh"

PG_VERSION=15
PG_CLUSTER=main
# shellcheck disable=SC2034 # read by svc_port in lib.sh
postgres_port=5432
PG_CONF_DIR=/etc/postgresql/$PG_VERSION/$PG_CLUSTER
# The server's certificate and key as the postgres user may read them (it cannot enter $PLATFORM_DATA
# under /root, and it refuses a key file others can read).
PG_TLS_DIR=$PG_CONF_DIR/platform-tls

postgres_log() { printf '%s\n' "$PLATFORM_LOGS/postgres.log"; }

# Field N of the cluster's pg_lsclusters line (4 = status, 6 = data dir, 7 = log file).
_pg_cluster_field() { pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" -v f="$1" '$1 == v && $2 == c { print $f }'; }

postgres_ready() { pg_isready -q -h 127.0.0.1 -p "$postgres_port" -t 2; }

postgres_pid() {
  local datadir pid
  datadir=$(_pg_cluster_field 6)
  [[ -n "$datadir" && -f "$datadir/postmaster.pid" ]] || return 0
  pid=$(head -n 1 "$datadir/postmaster.pid")
  pid_alive "$pid" && ! started_after "$pid" "$datadir/postmaster.pid" && printf '%s\n' "$pid"
  return 0
}

# Create the cluster if the package did not (or it was dropped), and apply our settings.
_postgres_prepare() {
  if [[ -z "$(_pg_cluster_field 1)" ]]; then
    log "creating cluster $PG_VERSION/$PG_CLUSTER"
    pg_createcluster "$PG_VERSION" "$PG_CLUSTER" --port "$postgres_port" --encoding UTF8 --locale C.UTF-8 >&2
  fi
  tls_server_cert
  tls_copy_for postgres "$PG_TLS_DIR" || true
  # Dev/test tuning in a conf.d file (Debian's postgresql.conf includes conf.d/*.conf), so the
  # packaged file stays untouched.
  write_if_changed "$PG_CONF_DIR/conf.d/90-platform.conf" <<EOF || true
# Written by scripts/infra/services/postgres.sh: local development/test cluster of the platform.
listen_addresses = 'localhost'
port = $postgres_port
# Test suites open several pools (API, worker, relay, jest workers).
max_connections = 200
shared_buffers = 256MB
# Commits return before the WAL reaches the disk: a crash can lose the last ~0.6 s of commits but
# never corrupts the database (fsync stays on). Much faster test runs; NOT a production setting.
synchronous_commit = off
# Log slow statements for debugging tests.
log_min_duration_statement = 1000
log_line_prefix = '%m [%p] %q%u@%d '
# TLS for the clients that ask (DATABASE_SSL_MODE=require|verify-ca|verify-full); plain ones still connect.
# The ssl_* settings are reloadable: a new certificate takes effect on the reload below, without a restart.
ssl = on
ssl_cert_file = '$PG_TLS_DIR/$TLS_SERVER_NAME.crt'
ssl_key_file = '$PG_TLS_DIR/$TLS_SERVER_NAME.key'
ssl_min_protocol_version = 'TLSv1.2'
EOF
  # Password login over TCP must be allowed; Debian's default pg_hba has exactly this line.
  if ! grep -Eq '^host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+(scram-sha-256|md5)' "$PG_CONF_DIR/pg_hba.conf"; then
    log "adding a scram-sha-256 rule for 127.0.0.1 to pg_hba.conf"
    printf 'host    all             all             127.0.0.1/32            scram-sha-256\n' >>"$PG_CONF_DIR/pg_hba.conf"
  fi
  ln -sfn "$(_pg_cluster_field 7)" "$(postgres_log)"
  return 0
}

postgres_spawn() {
  _postgres_prepare
  # pg_ctlcluster waits until the server accepts connections and copes with a stale
  # postmaster.pid (it checks whether that pid still runs).
  pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start >&2 || {
    show_log_tail "$(postgres_log)"
    die "postgres: pg_ctlcluster $PG_VERSION $PG_CLUSTER start failed. Log: $(postgres_log)"
  }
}

postgres_wait() {
  WAIT_PID=$(postgres_pid) wait_until postgres 60 "$(postgres_log)" postgres_ready
}

# Roles and databases (idempotent), then prove a password login of the app role works.
postgres_after_start() {
  # A running cluster whose settings changed (e.g. first run after this script was updated)
  # needs a restart; listen_addresses and max_connections cannot be reloaded.
  if _postgres_settings_changed; then
    log "postgres settings changed; restarting the cluster"
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" restart >&2
    postgres_wait
  fi
  # psql reads the file from stdin: the postgres user may not be able to read the work tree.
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$postgres_port" -d postgres -f - \
    <"$REPO_ROOT/infra/postgres/init.sql" >/dev/null ||
    die "postgres: infra/postgres/init.sql failed (see above)"
  PGPASSWORD=platform_app psql -X -q -h 127.0.0.1 -p "$postgres_port" -U platform_app -d platform -tAc 'select 1' >/dev/null ||
    die "postgres: password login as platform_app@127.0.0.1 failed; check $PG_CONF_DIR/pg_hba.conf"
  # The same login over TLS, checked as the platform checks it (DATABASE_SSL_MODE=verify-full): a
  # certificate the server could not load on a reload leaves it on the old one, or on none.
  [[ "$(PGPASSWORD=platform_app PGSSLMODE=verify-full PGSSLROOTCERT=$TLS_CA_CERT psql -X -q -h 127.0.0.1 -p "$postgres_port" \
    -U platform_app -d platform -tAc 'select ssl from pg_stat_ssl where pid = pg_backend_pid()')" == t ]] ||
    die "postgres: a verify-full TLS login with $TLS_CA_CERT failed; see $(postgres_log)"
  log "postgres: roles platform_owner/platform_app and databases platform/platform_test are in place; TLS answers"
}

# The postgres user may not be allowed into the caller's directory (a clone under /tmp or /root):
# psql would warn on every call, so it runs from /.
as_postgres() { (cd / && runuser -u postgres -- "$@"); }

# True when the running server's settings differ from our conf.d file in a way a reload cannot
# apply (pg_settings.pending_restart after pg_reload_conf, which also picks up pg_hba changes).
_postgres_settings_changed() {
  _postgres_prepare
  local pending
  as_postgres psql -X -tAq -p "$postgres_port" -d postgres -c "select pg_reload_conf()" >/dev/null 2>&1 || true
  sleep 0.2
  pending=$(as_postgres psql -X -tAq -p "$postgres_port" -d postgres \
    -c "select count(*) from pg_settings where pending_restart" 2>/dev/null || echo 0)
  [[ "$pending" != "0" ]]
}

postgres_stop() {
  if [[ "$(_pg_cluster_field 4)" == online ]]; then
    log "stopping postgres"
    # fast = roll back open transactions and disconnect clients; fall back to immediate.
    pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" stop -m fast >&2 ||
      pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" stop -m immediate >&2 || true
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then svc_cli postgres "$@"; fi
