#!/usr/bin/env bash
# bench:money-flows against a Temporal server with PostgreSQL persistence, the topology a production
# user runs (issue 19), beside the dev server's SQLite the platform runs:
#   1. builds, once into the cache, the server and its schema tool from the module the CLI's dev server
#      embeds (go.temporal.io/server, the version below);
#   2. sets up its two databases in the platform's PostgreSQL (temporal_bench, temporal_bench_visibility,
#      owned by the role temporal_bench), from the schemas that module ships;
#   3. starts it on 127.0.0.1:7333 (one process, all four services, 4 history shards, the dev server's
#      tuning: the priority matcher and the history queues' read rate), creates the namespace `default`;
#   4. runs `npm run bench:money-flows` against it with the flags given here, stops it and drops the two databases.
# The platform must be up (`npm run up`): the bench uses its PostgreSQL, Redis and Kafka.
#
#   bash bench/temporal-postgres.sh [--concurrency 32] [--seconds 10] ...
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/infra/services/postgres.sh"
LOG_TAG=temporal-postgres

SERVER_VERSION=v1.29.1
SERVER_MODULE=go.temporal.io/server
GRPC_PORT=7333
ROLE=temporal_bench
DIR=$PLATFORM_DATA/temporal-postgres
CONFIG_DIR=$DIR/config
LOGFILE=$PLATFORM_LOGS/temporal-postgres.log
PIDFILE=$PLATFORM_RUN/temporal-postgres.pid
SERVER_BIN=$PLATFORM_BIN/temporal-server-$SERVER_VERSION
SQL_TOOL=$PLATFORM_BIN/temporal-sql-tool-$SERVER_VERSION

build() {
  [[ -x "$SERVER_BIN" && -x "$SQL_TOOL" ]] && return 0
  local gobin
  gobin=$(mktemp -d)
  log "building the Temporal server $SERVER_VERSION and its schema tool (once; several minutes on two cores)"
  GOBIN=$gobin go install "$SERVER_MODULE/cmd/server@$SERVER_VERSION" "$SERVER_MODULE/cmd/tools/sql@$SERVER_VERSION"
  mv "$gobin/server" "$SERVER_BIN"
  mv "$gobin/sql" "$SQL_TOOL"
  rm -rf "$gobin"
}

# The schema files of the module go install fetched.
schema_dir() { printf '%s/%s@%s/schema/postgresql/v12\n' "$(go env GOMODCACHE)" "$SERVER_MODULE" "$SERVER_VERSION"; }

sql_tool() {
  "$SQL_TOOL" --plugin postgres12 --endpoint 127.0.0.1 --port "$postgres_port" --user "$ROLE" --password "$ROLE" "$@"
}

databases() {
  log "databases temporal_bench and temporal_bench_visibility, fresh"
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -p "$postgres_port" -d postgres <<SQL
DROP DATABASE IF EXISTS temporal_bench WITH (FORCE);
DROP DATABASE IF EXISTS temporal_bench_visibility WITH (FORCE);
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$ROLE') THEN CREATE ROLE $ROLE LOGIN PASSWORD '$ROLE'; END IF;
END \$\$;
CREATE DATABASE temporal_bench OWNER $ROLE;
CREATE DATABASE temporal_bench_visibility OWNER $ROLE;
SQL
  local schemas
  schemas=$(schema_dir)
  sql_tool --database temporal_bench setup-schema -v 0.0 >>"$LOGFILE" 2>&1
  sql_tool --database temporal_bench update-schema -d "$schemas/temporal/versioned" >>"$LOGFILE" 2>&1
  sql_tool --database temporal_bench_visibility setup-schema -v 0.0 >>"$LOGFILE" 2>&1
  sql_tool --database temporal_bench_visibility update-schema -d "$schemas/visibility/versioned" >>"$LOGFILE" 2>&1
}

# One datastore entry of the config.
datastore() {
  cat <<YAML
    $1:
      sql:
        pluginName: postgres12
        databaseName: $2
        connectAddr: 127.0.0.1:$postgres_port
        connectProtocol: tcp
        user: $ROLE
        password: $ROLE
        maxConns: $3
        maxIdleConns: $3
        maxConnLifetime: 1h
YAML
}

# service NAME GRPC_PORT: the ports of one of the four services, all on the loopback.
service() {
  printf '  %s:\n    rpc:\n      grpcPort: %s\n      membershipPort: %s\n      bindOnLocalHost: true\n' "$1" "$2" "$(($2 + 1000))"
}

config() {
  mkdir -p "$CONFIG_DIR"
  {
    printf 'log:\n  stdout: true\n  level: warn\n'
    printf 'persistence:\n  defaultStore: default\n  visibilityStore: visibility\n  numHistoryShards: 4\n  datastores:\n'
    datastore default temporal_bench 20
    datastore visibility temporal_bench_visibility 10
    printf 'global:\n  membership:\n    maxJoinDuration: 30s\n    broadcastAddress: 127.0.0.1\n'
    printf 'services:\n'
    service frontend "$GRPC_PORT"
    service history $((GRPC_PORT + 1))
    service matching $((GRPC_PORT + 2))
    service worker $((GRPC_PORT + 6))
    printf 'clusterMetadata:\n  enableGlobalNamespace: false\n  failoverVersionIncrement: 10\n  masterClusterName: active\n'
    printf '  currentClusterName: active\n  clusterInformation:\n    active:\n      enabled: true\n      initialFailoverVersion: 1\n'
    printf '      rpcName: frontend\n      rpcAddress: 127.0.0.1:%s\n' "$GRPC_PORT"
    printf 'dcRedirectionPolicy:\n  policy: noop\n'
    printf 'dynamicConfigClient:\n  filepath: %s/dynamicconfig.yaml\n  pollInterval: 10s\n' "$CONFIG_DIR"
  } >"$CONFIG_DIR/development.yaml"
  # The dev server's settings (scripts/infra/services/temporal.sh): task priority, and history queues
  # read as fast as tasks arrive.
  cat >"$CONFIG_DIR/dynamicconfig.yaml" <<YAML
matching.useNewMatcher:
  - value: true
history.transferProcessorMaxPollRPS:
  - value: 1000
history.timerProcessorMaxPollRPS:
  - value: 1000
history.visibilityProcessorMaxPollRPS:
  - value: 1000
YAML
}

namespace_ready() {
  "$PLATFORM_BIN/temporal" operator namespace describe --namespace default --address "127.0.0.1:$GRPC_PORT"
}

start() {
  spawn_detached "$PIDFILE" "$LOGFILE" "$SERVER_BIN" --root "$DIR" --config config --env development --allow-no-auth start
  WAIT_PID=$(read_pidfile "$PIDFILE") wait_until temporal-postgres 120 "$LOGFILE" \
    "$PLATFORM_BIN/temporal" operator cluster health --address "127.0.0.1:$GRPC_PORT"
  "$PLATFORM_BIN/temporal" operator namespace create --namespace default --retention 24h --address "127.0.0.1:$GRPC_PORT" >/dev/null
  WAIT_PID=$(read_pidfile "$PIDFILE") wait_until "namespace default" 60 "$LOGFILE" namespace_ready
}

stop() {
  local pid
  if pid=$(read_pidfile "$PIDFILE"); then kill_and_wait "$pid" 20 temporal-postgres 1; fi
}

# After the run: the server stopped, its two databases dropped (they hold every bench workflow's
# history and visibility rows, and the next run sets them up anew anyway).
finish() {
  stop
  log "dropping temporal_bench and temporal_bench_visibility"
  as_postgres psql -X -q -p "$postgres_port" -d postgres \
    -c 'DROP DATABASE IF EXISTS temporal_bench WITH (FORCE)' -c 'DROP DATABASE IF EXISTS temporal_bench_visibility WITH (FORCE)' || true
}

main() {
  postgres_ready || die "PostgreSQL does not answer: bring the platform up first (npm run up)"
  build
  stop
  databases
  config
  start
  trap finish EXIT
  log "Temporal with PostgreSQL persistence on 127.0.0.1:$GRPC_PORT (pid $(read_pidfile "$PIDFILE")); log $LOGFILE"
  (cd "$REPO_ROOT" && TEMPORAL_ADDRESS=127.0.0.1:$GRPC_PORT npm run -s bench:money-flows -- --temporal-pid "$(read_pidfile "$PIDFILE")" "$@")
}

main "$@"
