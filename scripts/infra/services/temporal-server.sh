# shellcheck shell=bash
# The Temporal server itself (not the dev server), with PostgreSQL persistence and visibility: the
# cluster profile's Temporal (docs/operations.md). Sourced by scripts/infra/services/temporal.sh when the profile is
# `cluster`, and by bench/temporal-postgres.sh; not run on its own.
#
# Every tserver_* function reads these, so a caller can run a second server beside the first:
#   TSERVER_NAME        pidfile and log name                         (temporal-server)
#   TSERVER_PORT        frontend gRPC port; history +1, matching +2, worker +6, membership -300 (7233)
#   TSERVER_DB          its two databases: $TSERVER_DB and ${TSERVER_DB}_visibility (temporal)
#   TSERVER_ROLE        the PostgreSQL role owning them, password TSERVER_DB_PASSWORD (temporal)
#   TSERVER_SHARDS      history shards, fixed once the databases exist (4)
#   TSERVER_NAMESPACE   the namespace it serves (TEMPORAL_NAMESPACE, default `default`)
#   TSERVER_METRICS_PORT  its Prometheus metrics on 127.0.0.1 (8000)
#   TSERVER_TLS_DIR     empty (the default): plain gRPC. Set: mTLS on the frontend (gRPC and HTTP API): it
#                       presents the local servers' certificate (scripts/infra/tls.sh: 127.0.0.1, localhost)
#                       and accepts only clients with a certificate of the local CA, such as the client
#                       certificate `temporal-client` issued here. The files are copied into the folder:
#                       ca.crt, server.crt/.key, temporal-client.crt/.key (what a client of it needs).
#                       Its own system worker and tserver_cli present that client certificate too.
# The binaries are built once into the cache by `scripts/infra/install.sh temporal-server`.
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"

TSERVER_VERSION=v1.29.1
TSERVER_BIN=$PLATFORM_BIN/temporal-server-$TSERVER_VERSION
TSERVER_SQL_TOOL=$PLATFORM_BIN/temporal-sql-tool-$TSERVER_VERSION
# The Web UI's standalone server, the version the CLI's dev server embeds.
TSERVER_UI_BIN=$PLATFORM_BIN/temporal-ui-server-v2.42.1

TSERVER_NAME=${TSERVER_NAME:-temporal-server}
TSERVER_PORT=${TSERVER_PORT:-7233}
TSERVER_DB=${TSERVER_DB:-temporal}
TSERVER_ROLE=${TSERVER_ROLE:-temporal}
TSERVER_DB_PASSWORD=${TSERVER_DB_PASSWORD:-temporal}
TSERVER_SHARDS=${TSERVER_SHARDS:-4}
TSERVER_NAMESPACE=${TSERVER_NAMESPACE:-${TEMPORAL_NAMESPACE:-default}}
TSERVER_METRICS_PORT=${TSERVER_METRICS_PORT:-8000}
TSERVER_TLS_DIR=${TSERVER_TLS_DIR:-}
# The client certificate of a TLS server (tls.sh's name, and its CN).
TSERVER_TLS_CLIENT=temporal-client

tserver_dir() { printf '%s/%s\n' "$PLATFORM_DATA" "$TSERVER_NAME"; }
tserver_log() { printf '%s/%s.log\n' "$PLATFORM_LOGS" "$TSERVER_NAME"; }
tserver_pidfile() { pidfile_of "$TSERVER_NAME"; }
tserver_pid() { read_pidfile "$(tserver_pidfile)" 2>/dev/null; }

# The schema files of the server module the install fetched (go install keeps it in the module cache).
tserver_schema_dir() {
  printf '%s/go.temporal.io/server@%s/schema/postgresql/v12\n' "$(go env GOMODCACHE)" "$TSERVER_VERSION"
}

tserver_sql_tool() {
  "$TSERVER_SQL_TOOL" --plugin postgres12 --endpoint 127.0.0.1 --port "$postgres_port" \
    --user "$TSERVER_ROLE" --password "$TSERVER_DB_PASSWORD" "$@"
}

# The role and the two databases, then each schema set up once and migrated to the server's version:
# update-schema applies only the versions a database lacks, so an upgraded server migrates its data.
tserver_databases() {
  local schemas db kind
  schemas=$(tserver_schema_dir)
  [[ -d "$schemas" ]] || die "$TSERVER_NAME: schema files missing ($schemas); run scripts/infra/install.sh temporal-server"
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$postgres_port" -d postgres >/dev/null <<SQL
SELECT 'CREATE ROLE $TSERVER_ROLE' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$TSERVER_ROLE')
\gexec
ALTER ROLE $TSERVER_ROLE WITH LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB PASSWORD '$TSERVER_DB_PASSWORD';
SELECT 'CREATE DATABASE $TSERVER_DB OWNER $TSERVER_ROLE' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$TSERVER_DB')
\gexec
SELECT 'CREATE DATABASE ${TSERVER_DB}_visibility OWNER $TSERVER_ROLE' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '${TSERVER_DB}_visibility')
\gexec
SQL
  for kind in temporal visibility; do
    db=$TSERVER_DB
    [[ $kind == visibility ]] && db=${TSERVER_DB}_visibility
    if ! PGPASSWORD=$TSERVER_DB_PASSWORD psql -X -tAq -h 127.0.0.1 -p "$postgres_port" -U "$TSERVER_ROLE" -d "$db" \
      -c "select 1 from schema_version limit 1" >/dev/null 2>&1; then
      log "$TSERVER_NAME: setting up the $kind schema in $db"
      tserver_sql_tool --database "$db" setup-schema -v 0.0 >>"$(tserver_log)" 2>&1 ||
        die "$TSERVER_NAME: setup-schema of $db failed (log: $(tserver_log))"
    fi
    tserver_sql_tool --database "$db" update-schema -d "$schemas/$kind/versioned" >>"$(tserver_log)" 2>&1 ||
      die "$TSERVER_NAME: update-schema of $db failed (log: $(tserver_log))"
  done
}

# One datastore of the configuration.
tserver_datastore() {
  cat <<YAML
    $1:
      sql:
        pluginName: postgres12
        databaseName: $2
        connectAddr: 127.0.0.1:$postgres_port
        connectProtocol: tcp
        user: $TSERVER_ROLE
        password: $TSERVER_DB_PASSWORD
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
YAML
}

# One of the four services: its gRPC port and its membership port (the server's own layout, 7233/6933...).
# The frontend also serves Temporal's HTTP API, on its gRPC port + 10 (the server's default is 7243 for all).
# The certificates of a TLS server, issued by the local CA (once) and copied into TSERVER_TLS_DIR.
tserver_tls_files() {
  tls_server_cert
  tls_issue "$TSERVER_TLS_CLIENT" "DNS:$TSERVER_TLS_CLIENT"
  tls_copy_for "$(id -un)" "$TSERVER_TLS_DIR" "$TLS_SERVER_NAME" || true
  tls_copy_for "$(id -un)" "$TSERVER_TLS_DIR" "$TSERVER_TLS_CLIENT" || true
}

# The frontend's mTLS, and how the server's own system worker reaches it (with the client certificate,
# the frontend's certificate checked under the name localhost), as global.tls of the configuration.
tserver_tls_config() {
  local dir=$TSERVER_TLS_DIR
  cat <<YAML
  tls:
    frontend:
      server:
        certFile: $dir/$TLS_SERVER_NAME.crt
        keyFile: $dir/$TLS_SERVER_NAME.key
        requireClientAuth: true
        clientCaFiles:
          - $dir/ca.crt
      client:
        serverName: localhost
        rootCaFiles:
          - $dir/ca.crt
    systemWorker:
      certFile: $dir/$TSERVER_TLS_CLIENT.crt
      keyFile: $dir/$TSERVER_TLS_CLIENT.key
      client:
        serverName: localhost
        rootCaFiles:
          - $dir/ca.crt
YAML
}

tserver_service() {
  printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnLocalHost: true\n' "$1" "$2" "$(($2 - 300))"
  [[ $1 == frontend ]] && printf '      httpPort: %s\n' "$(($2 + 10))"
  return 0
}

# The server's configuration: all four services in one process on the loopback, several history
# shards (their number is fixed for the life of the databases), Prometheus metrics, the shared
# dynamic configuration (infra/temporal/dynamicconfig.yaml, also docker-compose.yml's).
tserver_config() {
  local dir
  dir=$(tserver_dir)/config
  mkdir -p "$dir"
  {
    printf 'log:\n  stdout: true\n  level: warn\n'
    printf 'persistence:\n  defaultStore: default\n  visibilityStore: visibility\n  numHistoryShards: %s\n  datastores:\n' "$TSERVER_SHARDS"
    tserver_datastore default "$TSERVER_DB" 20
    tserver_datastore visibility "${TSERVER_DB}_visibility" 10
    printf 'global:\n  membership:\n    maxJoinDuration: 30s\n    broadcastAddress: 127.0.0.1\n'
    printf '  metrics:\n    prometheus:\n      framework: tally\n      timerType: histogram\n      listenAddress: 127.0.0.1:%s\n' "$TSERVER_METRICS_PORT"
    if [[ -n "$TSERVER_TLS_DIR" ]]; then tserver_tls_config; fi
    printf 'services:\n'
    tserver_service frontend "$TSERVER_PORT"
    tserver_service history $((TSERVER_PORT + 1))
    tserver_service matching $((TSERVER_PORT + 2))
    tserver_service worker $((TSERVER_PORT + 6))
    printf 'clusterMetadata:\n  enableGlobalNamespace: false\n  failoverVersionIncrement: 10\n  masterClusterName: active\n'
    printf '  currentClusterName: active\n  clusterInformation:\n    active:\n      enabled: true\n      initialFailoverVersion: 1\n'
    printf '      rpcName: frontend\n      rpcAddress: 127.0.0.1:%s\n' "$TSERVER_PORT"
    printf 'dcRedirectionPolicy:\n  policy: noop\n'
    printf 'dynamicConfigClient:\n  filepath: %s/infra/temporal/dynamicconfig.yaml\n  pollInterval: 10s\n' "$REPO_ROOT"
  } | write_if_changed "$dir/development.yaml" || true
}

tserver_cli() {
  local tls=()
  if [[ -n "$TSERVER_TLS_DIR" ]]; then
    tls=(--tls-ca-path "$TSERVER_TLS_DIR/ca.crt" --tls-cert-path "$TSERVER_TLS_DIR/$TSERVER_TLS_CLIENT.crt"
      --tls-key-path "$TSERVER_TLS_DIR/$TSERVER_TLS_CLIENT.key")
  fi
  "$PLATFORM_BIN/temporal" --address "127.0.0.1:$TSERVER_PORT" --command-timeout 5s "${tls[@]}" "$@"
}

tserver_ready() {
  port_open 127.0.0.1 "$TSERVER_PORT" && tserver_cli operator namespace describe --namespace "$TSERVER_NAMESPACE" >/dev/null 2>&1
}

tserver_spawn() {
  [[ -x "$TSERVER_BIN" && -x "$TSERVER_SQL_TOOL" ]] || die "$TSERVER_NAME: $TSERVER_BIN missing; run scripts/infra/install.sh temporal-server"
  postgres_ready || die "$TSERVER_NAME: PostgreSQL does not answer (it keeps the server's data)"
  tserver_databases
  if [[ -n "$TSERVER_TLS_DIR" ]]; then tserver_tls_files; fi
  tserver_config
  spawn_detached "$(tserver_pidfile)" "$(tserver_log)" "$TSERVER_BIN" --root "$(tserver_dir)" --config config \
    --env development --allow-no-auth start
}

# Waits for the frontend, then makes sure the namespace exists (a new database has none).
tserver_wait() {
  WAIT_PID=$(tserver_pid) wait_until "$TSERVER_NAME" "$SVC_START_TIMEOUT" "$(tserver_log)" \
    tserver_cli operator cluster health
  if ! tserver_ready; then
    tserver_cli operator namespace create --namespace "$TSERVER_NAMESPACE" --retention 72h >/dev/null
    WAIT_PID=$(tserver_pid) wait_until "namespace $TSERVER_NAMESPACE" 60 "$(tserver_log)" tserver_ready
  fi
}

tserver_stop() {
  stop_pidfile "$(tserver_pidfile)" 20 "$TSERVER_NAME" 1
}

# ---- the Web UI's standalone server, pointed at the server ---------------------------------------
TSERVER_UI_PORT=${TSERVER_UI_PORT:-8233}

tserver_ui_pidfile() { pidfile_of "$TSERVER_NAME-ui"; }

tserver_ui_spawn() {
  [[ -x "$TSERVER_UI_BIN" ]] || die "$TSERVER_NAME: $TSERVER_UI_BIN missing; run scripts/infra/install.sh temporal-server"
  local dir
  dir=$(tserver_dir)/ui/config
  mkdir -p "$dir"
  # The UI server reads base.yaml, then the environment's file over it.
  printf 'temporalGrpcAddress: 127.0.0.1:%s\nhost: 127.0.0.1\nport: %s\nenableUi: true\ndefaultNamespace: %s\n' \
    "$TSERVER_PORT" "$TSERVER_UI_PORT" "$TSERVER_NAMESPACE" | write_if_changed "$dir/base.yaml" || true
  printf 'cors:\n  allowOrigins:\n    - http://127.0.0.1:%s\n' "$TSERVER_UI_PORT" | write_if_changed "$dir/development.yaml" || true
  spawn_detached "$(tserver_ui_pidfile)" "$PLATFORM_LOGS/$TSERVER_NAME-ui.log" "$TSERVER_UI_BIN" \
    --root "$(tserver_dir)/ui" --config config --env development start
}

tserver_ui_wait() {
  WAIT_PID=$(read_pidfile "$(tserver_ui_pidfile)") wait_until "Temporal UI" 30 "$PLATFORM_LOGS/$TSERVER_NAME-ui.log" \
    http_ok "http://127.0.0.1:$TSERVER_UI_PORT/"
}

tserver_ui_stop() { stop_pidfile "$(tserver_ui_pidfile)" 10 "$TSERVER_NAME-ui" 1; }
